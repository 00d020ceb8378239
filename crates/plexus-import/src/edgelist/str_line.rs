//! The direct path for lines of string ids: `name<sep>name[<sep>weight]`, the counterpart of `int_line` for
//! integer ids. The general path splits a line into fields after scanning it for blanks, comments and quotes,
//! trims each field and checks it is UTF-8: five passes over every byte. A chunk with no quote and no byte
//! outside ASCII (checked once, at memory speed) needs none of that per line, only the separators' places.

/// One line read by [`str_line`].
#[derive(Debug, PartialEq)]
pub(super) struct StrLine<'a> {
    pub src: &'a [u8],
    pub dst: &'a [u8],
    /// 0 without a weight column.
    pub weight: f64,
    /// Where the next line starts.
    pub next: usize,
    /// Whether the line ended in a newline (else it ended the chunk).
    pub newline: bool,
}

/// A line of `chunk` at `pos` ending in `\n`, `\r\n` or the end of `chunk`, that the general path would read as
/// two non-empty string ids (and with `weighted`, a weight), when `chunk` holds no quote and only ASCII. `None`
/// for any line the general path might read otherwise (a comment, blanks around a field, a missing or extra
/// field, a weight it would not take), which it then reads.
#[inline]
pub(super) fn str_line(chunk: &[u8], pos: usize, sep: u8, weighted: bool) -> Option<StrLine<'_>> {
    let rest = &chunk[pos..];
    let (end, newline) = match memchr::memchr(b'\n', rest) {
        Some(end) => (end, true),
        None => (rest.len(), false),
    };
    let line = &rest[..end];
    let line = super::strip_cr(line);
    let first = memchr::memchr(sep, line)?;
    let (src, after) = (&line[..first], &line[first + 1..]);
    let (dst, weight) = if weighted {
        let second = memchr::memchr(sep, after)?;
        let (dst, text) = (&after[..second], &after[second + 1..]);
        if !plain(text) || memchr::memchr(sep, text).is_some() {
            return None;
        }
        (dst, super::parse_float(text)?)
    } else {
        if memchr::memchr(sep, after).is_some() {
            return None;
        }
        (after, 0.0)
    };
    // A line starting with `#` is a comment; the general path trims blanks, so a field with one at either end
    // (or an empty one) is left to it.
    if !plain(src) || !plain(dst) || src[0] == b'#' {
        return None;
    }
    Some(StrLine { src, dst, weight, next: pos + end + usize::from(newline), newline })
}

/// Non-empty, with no blank at either end.
#[inline]
fn plain(field: &[u8]) -> bool {
    match (field.first(), field.last()) {
        (Some(a), Some(b)) => !a.is_ascii_whitespace() && !b.is_ascii_whitespace(),
        _ => false,
    }
}

/// Whether `chunk`'s lines may take [`str_line`]: no quote (fields would be unquoted) and only ASCII (ids are
/// then UTF-8 without checking).
pub(super) fn direct_path_fits(chunk: &[u8]) -> bool {
    chunk.is_ascii() && memchr::memchr(b'"', chunk).is_none()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::edgelist::Delimiter;
    use proptest::prelude::*;

    #[test]
    fn reads_plain_lines_and_leaves_the_rest() {
        let chunk = b"a,b\nc,d\r\n#x,y\n e,f\ng,\n,h\ni,j,k\nl,m";
        let mut pos = 0;
        let mut got = Vec::new();
        while pos < chunk.len() {
            match str_line(chunk, pos, b',', false) {
                Some(l) => {
                    got.push(format!("{}>{}", String::from_utf8_lossy(l.src), String::from_utf8_lossy(l.dst)));
                    pos = l.next;
                }
                None => {
                    got.push("-".into());
                    pos += memchr::memchr(b'\n', &chunk[pos..]).map_or(chunk.len() - pos, |p| p + 1);
                }
            }
        }
        assert_eq!(got, ["a>b", "c>d", "-", "-", "-", "-", "-", "l>m"]);
        let weighted = b"a\tb\t0.5\nc\td\t1e3\ne\tf\tx\ng\th\t 1\n";
        assert_eq!(str_line(weighted, 0, b'\t', true).map(|l| (l.weight, l.next, l.newline)), Some((0.5, 8, true)));
        assert_eq!(str_line(weighted, 8, b'\t', true).map(|l| l.weight), Some(1000.0));
        assert_eq!(str_line(weighted, 16, b'\t', true), None, "not a number");
        assert_eq!(str_line(weighted, 24, b'\t', true), None, "a blank before the weight");
        assert!(direct_path_fits(b"a,b\n") && !direct_path_fits(b"\"a\",b\n") && !direct_path_fits("é,b".as_bytes()));
    }

    /// A field from a small alphabet of letters, separators, blanks, quotes, comment marks and a non-ASCII letter.
    fn field() -> impl Strategy<Value = String> {
        proptest::collection::vec(prop::sample::select(vec!['a', 'b', ' ', ',', '\t', '#', '"', '\r']), 0..4)
            .prop_map(|c| c.into_iter().collect::<String>())
    }

    proptest! {
        /// Where the direct path reads a line, the general path reads the same ids and weight from it.
        #[test]
        fn the_direct_path_reads_what_the_general_path_reads(
            a in field(),
            b in field(),
            w in prop::sample::select(vec!["0.5", "1", "-2e3", "x", " 3", "", "nan", "1,2"]),
            weighted in any::<bool>(),
            tab in any::<bool>(),
            ending in prop::sample::select(vec!["\n", "\r\n", ""]),
        ) {
            let (sep, delimiter) = if tab { ('\t', Delimiter::Tab) } else { (',', Delimiter::Comma) };
            let text = if weighted { format!("{a}{sep}{b}{sep}{w}{ending}") } else { format!("{a}{sep}{b}{ending}") };
            let chunk = text.as_bytes();
            prop_assume!(direct_path_fits(chunk));
            if let Some(StrLine { src, dst, weight, next, newline }) = str_line(chunk, 0, sep as u8, weighted) {
                prop_assert_eq!(next, chunk.len());
                prop_assert_eq!(newline, !ending.is_empty());
                let line = super::super::strip_cr(chunk.strip_suffix(b"\n").unwrap_or(chunk));
                prop_assert!(!super::super::is_blank_or_comment(line));
                let f = super::super::fields(line, delimiter);
                prop_assert!(f.malformed.is_none());
                prop_assert_eq!(f.len(), if weighted { 3 } else { 2 });
                prop_assert_eq!(f.get(0).0, src);
                prop_assert_eq!(f.get(1).0, dst);
                if weighted {
                    prop_assert_eq!(super::super::parse_float(f.get(2).0).map(f64::to_bits), Some(weight.to_bits()));
                }
            }
        }
    }
}
