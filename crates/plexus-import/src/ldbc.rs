//! The LDBC Social Network Benchmark's CsvComposite layout, as node and relationship inputs of the generic
//! importer ([`crate::nodes_rels`]): a table says what each file is, and its plain header (`id|firstName|...`,
//! `Person.id|Person.id|creationDate`) is rewritten into typed columns.
//!
//! The layout: `static/` and `dynamic/` directories of `|`-separated files with a header row, entity files
//! `<entity>_<n>_<m>.csv`, relation files `<src>_<relation>_<dst>_<n>_<m>.csv`, dates as epoch milliseconds,
//! multi-valued `language` and `email` of persons joined with `;`. It is mapped as the LDBC reference Cypher
//! implementation does: labels Person, Forum, Post and Comment (both also Message), Tag, TagClass, Place (also
//! City, Country or Continent from its `type`) and Organisation (also Company or University); relationship
//! types KNOWS, HAS_CREATOR, ...; properties named as in the headers. Dates stay integers (epoch milliseconds),
//! `language` and `email` of persons are string lists. Each entity kind has its own id space (LDBC ids are
//! unique per kind only), and each label gets `id` as its unique key where the ids allow it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::edgelist::IdType;
use crate::nodes_rels::{CsvOptions, HeaderRewrite, NodeFiles, RelFiles};

/// An entity file.
struct Entity {
    file: &'static str,
    /// Its id space, also the name its ids go by in relation file headers (`Person.id`).
    space: &'static str,
    labels: &'static [&'static str],
    /// A column whose value is a further label (`city` becomes `City`) instead of a property.
    label_column: Option<&'static str>,
    /// Multi-valued columns, stored as string lists.
    lists: &'static [&'static str],
}

const ENTITIES: [Entity; 8] = [
    Entity { file: "person", space: "Person", labels: &["Person"], label_column: None, lists: &["language", "email"] },
    Entity { file: "forum", space: "Forum", labels: &["Forum"], label_column: None, lists: &[] },
    Entity { file: "post", space: "Post", labels: &["Post", "Message"], label_column: None, lists: &[] },
    Entity { file: "comment", space: "Comment", labels: &["Comment", "Message"], label_column: None, lists: &[] },
    Entity { file: "tag", space: "Tag", labels: &["Tag"], label_column: None, lists: &[] },
    Entity { file: "tagclass", space: "TagClass", labels: &["TagClass"], label_column: None, lists: &[] },
    Entity { file: "place", space: "Place", labels: &["Place"], label_column: Some("type"), lists: &[] },
    Entity {
        file: "organisation",
        space: "Organisation",
        labels: &["Organisation"],
        label_column: Some("type"),
        lists: &[],
    },
];

/// A relation file: `<file>_<n>_<m>.csv`, relationships of `ty` from the first column's entity to the second's.
struct Relation {
    file: &'static str,
    ty: &'static str,
    src: &'static str,
    dst: &'static str,
}

const fn rel(file: &'static str, ty: &'static str, src: &'static str, dst: &'static str) -> Relation {
    Relation { file, ty, src, dst }
}

const RELATIONS: [Relation; 23] = [
    rel("comment_hasCreator_person", "HAS_CREATOR", "Comment", "Person"),
    rel("comment_hasTag_tag", "HAS_TAG", "Comment", "Tag"),
    rel("comment_isLocatedIn_place", "IS_LOCATED_IN", "Comment", "Place"),
    rel("comment_replyOf_comment", "REPLY_OF", "Comment", "Comment"),
    rel("comment_replyOf_post", "REPLY_OF", "Comment", "Post"),
    rel("forum_containerOf_post", "CONTAINER_OF", "Forum", "Post"),
    rel("forum_hasMember_person", "HAS_MEMBER", "Forum", "Person"),
    rel("forum_hasModerator_person", "HAS_MODERATOR", "Forum", "Person"),
    rel("forum_hasTag_tag", "HAS_TAG", "Forum", "Tag"),
    rel("person_hasInterest_tag", "HAS_INTEREST", "Person", "Tag"),
    rel("person_isLocatedIn_place", "IS_LOCATED_IN", "Person", "Place"),
    rel("person_knows_person", "KNOWS", "Person", "Person"),
    rel("person_likes_comment", "LIKES", "Person", "Comment"),
    rel("person_likes_post", "LIKES", "Person", "Post"),
    rel("person_studyAt_organisation", "STUDY_AT", "Person", "Organisation"),
    rel("person_workAt_organisation", "WORK_AT", "Person", "Organisation"),
    rel("post_hasCreator_person", "HAS_CREATOR", "Post", "Person"),
    rel("post_hasTag_tag", "HAS_TAG", "Post", "Tag"),
    rel("post_isLocatedIn_place", "IS_LOCATED_IN", "Post", "Place"),
    rel("organisation_isLocatedIn_place", "IS_LOCATED_IN", "Organisation", "Place"),
    rel("place_isPartOf_place", "IS_PART_OF", "Place", "Place"),
    rel("tag_hasType_tagclass", "HAS_TYPE", "Tag", "TagClass"),
    rel("tagclass_isSubclassOf_tagclass", "IS_SUBCLASS_OF", "TagClass", "TagClass"),
];

/// The type of a property column, by name: dates are epoch-millisecond longs.
fn property_type(name: &str, lists: &[&str]) -> &'static str {
    match name {
        "creationDate" | "birthday" | "joinDate" => "long",
        "length" | "classYear" | "workFrom" => "int",
        _ if lists.contains(&name) => "string[]",
        _ => "string",
    }
}

/// The CSV options of the layout: `|`-separated, `;` inside lists, integer ids.
pub fn csv_options() -> CsvOptions {
    CsvOptions { delimiter: b'|', array_delimiter: b';', id_type: IdType::Integer, ..CsvOptions::default() }
}

fn entity_header(e: &'static Entity) -> HeaderRewrite {
    Arc::new(move |fields: &[String]| {
        if !fields.iter().any(|f| f == "id") {
            return Err(format!("an LDBC {} file needs an id column", e.file));
        }
        Ok(fields
            .iter()
            .map(|f| match f.as_str() {
                "id" => format!("id:ID({})", e.space),
                f if Some(f) == e.label_column => ":LABEL".to_string(),
                f => format!("{f}:{}", property_type(f, e.lists)),
            })
            .collect())
    })
}

fn relation_header(r: &'static Relation) -> HeaderRewrite {
    Arc::new(move |fields: &[String]| {
        let end = |i: usize, space: &str| {
            let f = fields.get(i).map(String::as_str).unwrap_or("");
            if f.to_ascii_lowercase().ends_with(".id") {
                Ok(())
            } else {
                Err(format!("column {} of an LDBC {} file should be {space}.id, found '{f}'", i + 1, r.file))
            }
        };
        end(0, r.src)?;
        end(1, r.dst)?;
        let mut out = vec![format!(":START_ID({})", r.src), format!(":END_ID({})", r.dst)];
        out.extend(fields[2..].iter().map(|f| format!("{f}:{}", property_type(f, &[]))));
        Ok(out)
    })
}

/// `name` is `<stem>_<digits>_<digits>.csv` (optionally compressed).
fn part_of(name: &str, stem: &str) -> bool {
    let Some(rest) = name.strip_prefix(stem).and_then(|r| r.strip_prefix('_')) else { return false };
    let rest = rest.strip_suffix(".gz").or_else(|| rest.strip_suffix(".zst")).unwrap_or(rest);
    let Some(rest) = rest.strip_suffix(".csv") else { return false };
    let parts: Vec<&str> = rest.split('_').collect();
    parts.len() == 2 && parts.iter().all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

/// The inputs of an LDBC SNB directory.
pub struct Layout {
    pub nodes: Vec<NodeFiles>,
    pub relationships: Vec<RelFiles>,
    /// Files in the directories that are not part of the layout (not imported).
    pub notes: Vec<String>,
}

/// The node and relationship inputs of an LDBC SNB directory (holding `static/` and `dynamic/`, or the files
/// themselves).
pub fn layout(dir: &Path) -> Result<Layout, String> {
    if let Err(e) = std::fs::read_dir(dir) {
        let what = if dir.is_file() {
            "is a file, not the directory of an LDBC SNB data set".to_string()
        } else {
            e.to_string()
        };
        return Err(format!("{}: {what}", dir.display()));
    }
    let mut files: Vec<PathBuf> = Vec::new();
    for sub in [dir.join("static"), dir.join("dynamic"), dir.to_path_buf()] {
        let Ok(entries) = std::fs::read_dir(&sub) else { continue };
        for entry in entries.flatten() {
            if entry.file_type().is_ok_and(|t| t.is_file()) {
                files.push(entry.path());
            }
        }
    }
    files.sort();
    let name_of = |p: &PathBuf| p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let mut used = vec![false; files.len()];
    let mut take = |stem: &str| -> Vec<PathBuf> {
        let mut out = Vec::new();
        for (i, f) in files.iter().enumerate() {
            if part_of(&name_of(f), stem) {
                used[i] = true;
                out.push(f.clone());
            }
        }
        out
    };
    let mut missing = Vec::new();
    let mut nodes = Vec::new();
    for e in &ENTITIES {
        let found = take(e.file);
        if found.is_empty() {
            missing.push(e.file);
        }
        // Every part has its own header row, so each is an input of its own.
        for path in found {
            nodes.push(NodeFiles {
                files: vec![path],
                labels: e.labels.iter().map(|l| l.to_string()).collect(),
                rewrite: Some(entity_header(e)),
                capitalize_labels: true,
            });
        }
    }
    let mut rels = Vec::new();
    for r in &RELATIONS {
        let found = take(r.file);
        if found.is_empty() {
            missing.push(r.file);
        }
        for path in found {
            rels.push(RelFiles {
                files: vec![path],
                rel_type: Some(r.ty.to_string()),
                rewrite: Some(relation_header(r)),
            });
        }
    }
    if missing.len() == ENTITIES.len() + RELATIONS.len() {
        // Nothing at all: perhaps the directory above the data set (which holds e.g. `vanilla/`).
        let inside: Vec<String> = std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.join("static").is_dir() || p.join("dynamic").is_dir())
            .map(|p| p.display().to_string())
            .collect();
        if !inside.is_empty() {
            return Err(format!(
                "{} holds no LDBC SNB files itself; did you mean {}?",
                dir.display(),
                inside.join(" or ")
            ));
        }
    }
    if !missing.is_empty() {
        return Err(format!(
            "{} is not a complete LDBC SNB CsvComposite directory: no {} files (looked in static/, dynamic/ and the directory itself)",
            dir.display(),
            missing.iter().map(|m| format!("{m}_*_*.csv")).collect::<Vec<_>>().join(", ")
        ));
    }
    let notes = files
        .iter()
        .zip(&used)
        .filter(|(f, used)| !**used && name_of(f).ends_with(".csv"))
        .map(|(f, _)| format!("{} is not part of the LDBC layout and was not imported", f.display()))
        .collect();
    Ok(Layout { nodes, relationships: rels, notes })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_and_headers() {
        assert!(part_of("person_0_0.csv", "person"));
        assert!(part_of("person_12_3.csv.gz", "person"));
        assert!(!part_of("person_knows_person_0_0.csv", "person"));
        assert!(!part_of("person_0.csv", "person"));
        let fields = |s: &str| s.split('|').map(String::from).collect::<Vec<_>>();
        let person = entity_header(&ENTITIES[0])(&fields("id|firstName|birthday|language|email")).unwrap();
        assert_eq!(
            person,
            ["id:ID(Person)", "firstName:string", "birthday:long", "language:string[]", "email:string[]"]
        );
        let place = entity_header(&ENTITIES[6])(&fields("id|name|url|type")).unwrap();
        assert_eq!(place, ["id:ID(Place)", "name:string", "url:string", ":LABEL"]);
        let post = entity_header(&ENTITIES[2])(&fields("id|language|length")).unwrap();
        assert_eq!(post, ["id:ID(Post)", "language:string", "length:int"]);
        let knows = relation_header(&RELATIONS[11])(&fields("Person.id|Person.id|creationDate")).unwrap();
        assert_eq!(knows, [":START_ID(Person)", ":END_ID(Person)", "creationDate:long"]);
        assert!(relation_header(&RELATIONS[11])(&fields("a|b")).is_err());
    }
}
