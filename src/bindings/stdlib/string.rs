//! `string`: the character-class constants (`ascii_letters`, `digits`, `punctuation`,
//! ...) and `capwords`, with CPython's values.

use super::f;
use crate::bindings::common::arg;
use crate::lang::{NativeModule, PyErr, Value};

const LOWER: &str = "abcdefghijklmnopqrstuvwxyz";
const UPPER: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const DIGITS: &str = "0123456789";
const PUNCTUATION: &str = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~";
const WHITESPACE: &str = " \t\n\r\x0b\x0c";

pub fn module() -> Value {
    let letters = format!("{LOWER}{UPPER}");
    NativeModule::new("string", "A collection of string constants.")
        .with("ascii_lowercase", Value::str(LOWER))
        .with("ascii_uppercase", Value::str(UPPER))
        .with("ascii_letters", Value::from(letters.as_str()))
        .with("digits", Value::str(DIGITS))
        .with("hexdigits", Value::str("0123456789abcdefABCDEF"))
        .with("octdigits", Value::str("01234567"))
        .with("punctuation", Value::str(PUNCTUATION))
        .with("whitespace", Value::str(WHITESPACE))
        .with(
            "printable",
            Value::from(format!("{DIGITS}{letters}{PUNCTUATION}{WHITESPACE}")),
        )
        .with(
            "capwords",
            f(
                "capwords",
                "capwords(s, sep=None)\nSplit the argument into words using split, capitalize each word using capitalize, and join the capitalized words using join.",
                |a, _| {
                    let s = a.bind("capwords", &["s", "sep"], 1)?;
                    let text = arg(&s, 0).as_str().map_err(|_| {
                        PyErr::attribute_error(format!(
                            "'{}' object has no attribute 'split'",
                            arg(&s, 0).type_name()
                        ))
                    })?;
                    let cap = |w: &str| {
                        let mut c = w.chars();
                        match c.next() {
                            Some(first) => {
                                first.to_uppercase().collect::<String>()
                                    + &c.as_str().to_lowercase()
                            }
                            None => String::new(),
                        }
                    };
                    let out = match arg(&s, 1) {
                        Value::None => text
                            .split_whitespace()
                            .map(cap)
                            .collect::<Vec<_>>()
                            .join(" "),
                        sep => {
                            let sep = sep.as_str()?;
                            if sep.is_empty() {
                                return Err(PyErr::value_error("empty separator"));
                            }
                            text.split(sep).map(cap).collect::<Vec<_>>().join(sep)
                        }
                    };
                    Ok(Value::from(out))
                },
            ),
        )
        .into_value()
}
