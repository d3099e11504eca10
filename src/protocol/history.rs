//! Answers `history_request` (tail, range, search) from the cells this session stored.
//! Only the current session exists, so every entry has session number 1 or what the
//! interpreter reports.

use serde::Deserialize;
use serde_json::{json, Value};

use crate::cell::HistoryEntry;

#[derive(Debug, Deserialize)]
pub struct HistoryRequest {
    #[serde(default)]
    pub output: bool,
    #[serde(default = "tail")]
    pub hist_access_type: String,
    #[serde(default)]
    pub session: i64,
    #[serde(default)]
    pub start: i64,
    #[serde(default)]
    pub stop: Option<i64>,
    #[serde(default)]
    pub n: Option<usize>,
    #[serde(default)]
    pub pattern: Option<String>,
    #[serde(default)]
    pub unique: bool,
}

fn tail() -> String {
    "tail".into()
}

/// Selects entries as IPython's history manager would, as `[session, line, input]` triples
/// (or `[session, line, [input, null]]` when output was asked for: no output is stored).
pub fn answer(req: &HistoryRequest, entries: &[HistoryEntry]) -> Vec<Value> {
    let picked: Vec<&HistoryEntry> = match req.hist_access_type.as_str() {
        "range" => entries
            .iter()
            .filter(|e| {
                let line = e.line as i64;
                line >= req.start && req.stop.is_none_or(|stop| line < stop)
            })
            .collect(),
        "search" => {
            let pattern = req.pattern.clone().unwrap_or_else(|| "*".into());
            let mut hits: Vec<&HistoryEntry> = entries
                .iter()
                .filter(|e| glob(&pattern, &e.input))
                .collect();
            if req.unique {
                let mut seen = std::collections::HashSet::new();
                // Keep the latest occurrence of each input, as IPython does.
                let mut kept: Vec<&HistoryEntry> = hits
                    .iter()
                    .rev()
                    .filter(|e| seen.insert(e.input.as_str()))
                    .copied()
                    .collect();
                kept.reverse();
                hits = kept;
            }
            last_n(hits, req.n)
        }
        _ => last_n(entries.iter().collect(), req.n.or(Some(10))),
    };
    picked
        .into_iter()
        .map(|e| {
            if req.output {
                json!([e.session, e.line, [e.input, null]])
            } else {
                json!([e.session, e.line, e.input])
            }
        })
        .collect()
}

fn last_n(v: Vec<&HistoryEntry>, n: Option<usize>) -> Vec<&HistoryEntry> {
    match n {
        Some(n) if n < v.len() => v[v.len() - n..].to_vec(),
        _ => v,
    }
}

/// Shell-style matching: `*` any run of characters, `?` one character.
pub fn glob(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    // Classic two-pointer match with backtracking to the last star.
    let (mut pi, mut ti) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        match p.get(pi) {
            Some('*') => {
                star = Some((pi, ti));
                pi += 1;
            }
            Some(&c) if c == '?' || c == t[ti] => {
                pi += 1;
                ti += 1;
            }
            _ => match star {
                Some((sp, st)) => {
                    pi = sp + 1;
                    ti = st + 1;
                    star = Some((sp, st + 1));
                }
                None => return false,
            },
        }
    }
    p[pi.min(p.len())..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries() -> Vec<HistoryEntry> {
        ["a = 1", "print(a)", "a = 1", "b = 2"]
            .iter()
            .enumerate()
            .map(|(i, s)| HistoryEntry {
                session: 1,
                line: i as u64 + 1,
                input: s.to_string(),
            })
            .collect()
    }

    fn req(kind: &str) -> HistoryRequest {
        serde_json::from_value(json!({"hist_access_type": kind})).unwrap()
    }

    #[test]
    fn glob_matches_like_a_shell() {
        assert!(glob("a*", "a = 1"));
        assert!(glob("*int(?)", "print(a)"));
        assert!(!glob("b*", "a = 1"));
        assert!(glob("*", ""));
    }

    #[test]
    fn tail_range_and_unique_search() {
        let mut r = req("tail");
        r.n = Some(2);
        assert_eq!(
            answer(&r, &entries()),
            vec![json!([1, 3, "a = 1"]), json!([1, 4, "b = 2"])]
        );
        let mut r = req("range");
        r.start = 2;
        r.stop = Some(3);
        assert_eq!(answer(&r, &entries()), vec![json!([1, 2, "print(a)"])]);
        let mut r = req("search");
        r.pattern = Some("a*".into());
        r.unique = true;
        assert_eq!(answer(&r, &entries()), vec![json!([1, 3, "a = 1"])]);
    }
}
