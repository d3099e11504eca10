//! The array library against real numpy 2: printing (repr and str) of many arrays, and
//! the legacy RandomState streams, from tests/fixtures/numpy/tensor_cases.json (made by
//! gen_tensor_fixtures.py in the same folder).

use mirror_kernel::tensor::{build, repr_array, str_array, DType, NdArray, RandomState};
use serde_json::Value;

fn cases() -> Value {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/numpy/tensor_cases.json"
    ))
    .expect("fixture file is committed");
    serde_json::from_str(&text).expect("fixture is valid JSON")
}

fn array_of(case: &Value) -> NdArray {
    let dtype = DType::parse(case["dtype"].as_str().unwrap()).unwrap();
    let shape: Vec<usize> = case["shape"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_u64().unwrap() as usize)
        .collect();
    let vals = case["values"].as_array().unwrap();
    if dtype.is_float() {
        let v: Vec<f64> = vals
            .iter()
            .map(|s| s.as_str().unwrap().parse::<f64>().unwrap())
            .collect();
        NdArray::from_f64(&shape, v).unwrap().astype(dtype)
    } else {
        let v: Vec<i64> = vals.iter().map(|s| s.as_i64().unwrap()).collect();
        NdArray::from_i64(&shape, v).unwrap().astype(dtype)
    }
}

#[test]
fn repr_and_str_match_numpy() {
    let all = cases();
    let mut failures = Vec::new();
    for case in all["arrays"].as_array().unwrap() {
        let a = array_of(case);
        let (r, s) = (repr_array(&a), str_array(&a));
        if r != case["repr"].as_str().unwrap() {
            failures.push(format!(
                "repr:\n{r}\nnumpy:\n{}",
                case["repr"].as_str().unwrap()
            ));
        }
        if s != case["str"].as_str().unwrap() {
            failures.push(format!(
                "str:\n{s}\nnumpy:\n{}",
                case["str"].as_str().unwrap()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn random_streams_match_numpy() {
    let all = cases();
    for case in all["random"].as_array().unwrap() {
        let seed = case["seed"].as_u64().unwrap() as u32;
        let n = case["n"].as_u64().unwrap() as usize;
        let mut r = RandomState::new(seed);
        let call = case["call"].as_str().unwrap();
        let vals = case["values"].as_array().unwrap();
        match call {
            "random" | "randn" => {
                let got: Vec<f64> = (0..n)
                    .map(|_| {
                        if call == "random" {
                            r.next_f64()
                        } else {
                            r.gauss()
                        }
                    })
                    .collect();
                let want: Vec<f64> = vals
                    .iter()
                    .map(|v| v.as_str().unwrap().parse().unwrap())
                    .collect();
                assert_eq!(got, want, "{call} seed {seed}");
            }
            _ => {
                let got: Vec<i64> = if call == "permutation_10" {
                    r.permutation(n)
                } else {
                    let parts: Vec<&str> = call.split('_').collect();
                    let (lo, hi): (i64, i64) =
                        (parts[1].parse().unwrap(), parts[2].parse().unwrap());
                    (0..n).map(|_| r.randint(lo, hi)).collect()
                };
                let want: Vec<i64> = vals.iter().map(|v| v.as_i64().unwrap()).collect();
                assert_eq!(got, want, "{call} seed {seed}");
            }
        }
    }
}

#[test]
fn arange_matches_numpy_repr() {
    let a = build::arange(0.0, 2000.0, 1.0, DType::F64).unwrap();
    assert_eq!(
        repr_array(&a),
        "array([0.000e+00, 1.000e+00, 2.000e+00, ..., 1.997e+03, 1.998e+03,\n       1.999e+03], shape=(2000,))"
    );
}
