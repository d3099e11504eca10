//! Keras's names for objects, as `keras.src.utils.naming` makes them: the snake-case form
//! of a class name (a layer's automatic name, and its group in a weights file) and the
//! names of a list's entries (`dense`, `dense_1`, ...). Used by saving and by the
//! bindings; it knows nothing of either.

use std::collections::HashMap;

/// Keras's `to_snake_case`: `MyModel` -> `my_model`, `TwoLayerMLP` -> `two_layer_mlp`,
/// `MaxPooling2D` -> `max_pooling2d`.
pub fn snake_case(name: &str) -> String {
    let chars: Vec<char> = name
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    let mut out = String::new();
    let mut prev: Option<char> = None;
    for (i, &c) in chars.iter().enumerate() {
        if let (true, Some(p)) = (c.is_uppercase(), prev) {
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_ascii_lowercase());
            // `(.)([A-Z][a-z]+)` then `([a-z])([A-Z])`, as Keras's two substitutions.
            if next_lower || p.is_ascii_lowercase() {
                out.push('_');
            }
        }
        out.extend(c.to_lowercase());
        prev = Some(c);
    }
    out
}

/// Keras's names for the entries of a list of saveables (`_save_container_state`): the
/// snake-case class name, then `_1`, `_2`, ... for later ones of the same class.
pub fn container_names<'a>(classes: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut used: HashMap<String, usize> = HashMap::new();
    classes
        .into_iter()
        .map(|c| {
            let base = snake_case(c);
            match used.get_mut(&base) {
                Some(n) => {
                    *n += 1;
                    format!("{base}_{n}")
                }
                None => {
                    used.insert(base.clone(), 0);
                    base
                }
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{container_names, snake_case};

    #[test]
    fn class_names_become_keras_group_names() {
        assert_eq!(snake_case("MaxPooling2D"), "max_pooling2d");
        assert_eq!(snake_case("Conv2D"), "conv2d");
        assert_eq!(snake_case("InputLayer"), "input_layer");
        assert_eq!(snake_case("Dense"), "dense");
        assert_eq!(snake_case("TwoLayerMLP"), "two_layer_mlp");
        assert_eq!(
            container_names(["InputLayer", "Dense", "Flatten", "Dense", "Dense"]),
            ["input_layer", "dense", "flatten", "dense_1", "dense_2"]
        );
    }
}
