//! `=~`: whole-string regular expression matching, with compiled patterns cached per thread.

use std::cell::RefCell;
use std::collections::HashMap;

use crate::error::{CypherError, Result};

thread_local! {
    static CACHE: RefCell<HashMap<String, regex::Regex>> = RefCell::new(HashMap::new());
}

/// Whether `text` matches `pattern` entirely (Cypher's `=~` anchors at both ends, like Java's `matches`).
pub fn full_match(pattern: &str, text: &str) -> Result<bool> {
    CACHE.with(|cache| {
        let mut cache = cache.borrow_mut();
        if !cache.contains_key(pattern) {
            let re = regex::Regex::new(&format!("^(?:{pattern})$")).map_err(|e| {
                CypherError::argument("InvalidArgumentValue", format!("invalid regular expression '{pattern}': {e}"))
            })?;
            if cache.len() > 256 {
                cache.clear();
            }
            cache.insert(pattern.to_string(), re);
        }
        Ok(cache[pattern].is_match(text))
    })
}
