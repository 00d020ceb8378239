//! The direct path for plain lines of integer ids, `digits<sep>digits[<sep>decimal]`: nearly every line of a
//! large edge list. The general path splits a line into fields and parses each; this one reads the digits
//! where they are, and short decimal weights exactly without going through `str::parse`.

/// A line `digits<sep>digits` (with `weighted`, `digits<sep>digits<sep>decimal`) ending in `\n`, `\r\n` or the
/// end of `chunk`, starting at `pos`: both numbers, the weight (0 without `weighted`), where the next line
/// starts, and whether the line ended in a newline. `None` for anything else (up to 18 digits each, so no
/// overflow check is needed; weights as [`short_decimal`] reads them), which the general path then reads.
#[inline]
pub(super) fn int_line(chunk: &[u8], pos: usize, sep: u8, weighted: bool) -> Option<(i64, i64, f64, usize, bool)> {
    let number = |mut i: usize| -> Option<(i64, usize)> {
        let start = i;
        let mut v: i64 = 0;
        while let Some(&c) = chunk.get(i) {
            let d = c.wrapping_sub(b'0');
            if d > 9 {
                break;
            }
            if i - start == 18 {
                return None;
            }
            v = v * 10 + d as i64;
            i += 1;
        }
        // A leading zero goes the slow way, which refuses it when the id type was guessed.
        (i > start && !(chunk[start] == b'0' && i > start + 1)).then_some((v, i))
    };
    let (a, i) = number(pos)?;
    if chunk.get(i) != Some(&sep) {
        return None;
    }
    let (b, mut i) = number(i + 1)?;
    let mut w = 0.0;
    if weighted {
        if chunk.get(i) != Some(&sep) {
            return None;
        }
        (w, i) = short_decimal(chunk, i + 1)?;
    }
    match chunk.get(i) {
        None => Some((a, b, w, i, false)),
        Some(b'\n') => Some((a, b, w, i + 1, true)),
        Some(b'\r') if chunk.get(i + 1) == Some(&b'\n') => Some((a, b, w, i + 2, true)),
        _ => None,
    }
}

/// Exact powers of ten as doubles (10^22 is the last one a double holds exactly).
const POWERS_OF_TEN: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20,
    1e21, 1e22,
];

/// A decimal `[-]digits[.digits]` of at most 15 digits at `chunk[i..]`, and where it ends. Its digits as an
/// integer and the power of ten it is divided by are both exact doubles (below 2^53 and at most 10^15), so one
/// division gives the correctly rounded value, the one `str::parse::<f64>` gives. `None` for anything longer
/// or of another form (an exponent, `inf`, a lone dot), which the general path reads.
#[inline]
pub(super) fn short_decimal(chunk: &[u8], mut i: usize) -> Option<(f64, usize)> {
    let negative = chunk.get(i) == Some(&b'-');
    i += negative as usize;
    let (mut mantissa, mut digits, mut fraction) = (0u64, 0usize, None::<usize>);
    while let Some(&c) = chunk.get(i) {
        match c {
            b'0'..=b'9' => {
                mantissa = mantissa * 10 + u64::from(c - b'0');
                digits += 1;
                if digits > 15 {
                    return None;
                }
            }
            b'.' if fraction.is_none() && digits > 0 => fraction = Some(digits),
            _ => break,
        }
        i += 1;
    }
    let decimals = match fraction {
        Some(at) if at == digits => return None,
        Some(at) => digits - at,
        None if digits == 0 => return None,
        None => 0,
    };
    let value = mantissa as f64 / POWERS_OF_TEN[decimals];
    Some((if negative { -value } else { value }, i))
}
