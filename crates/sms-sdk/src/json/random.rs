//! Random JSON for the differential tests of the in-place readers: bodies of chosen keys and
//! leaves, nested, with repeated keys and values of any type anywhere, and their damaged forms.

#![allow(clippy::indexing_slicing)] // test code: every index is drawn below its slice's length

/// A random JSON value of `keys` and `leaves` (text as written in JSON), nested at most
/// `depth` deep: objects repeat keys now and then, and values are of any type anywhere.
pub(crate) fn random_json(rng: &mut fastrand::Rng, depth: usize, keys: &[&str], leaves: &[&str], out: &mut String) {
    match if depth == 0 { 3 } else { rng.u8(..4) } {
        0 | 2 => {
            out.push('{');
            for i in 0..rng.usize(..5) {
                if i > 0 {
                    out.push(',');
                }
                out.push('"');
                out.push_str(keys[rng.usize(..keys.len())]);
                out.push_str("\":");
                random_json(rng, depth - 1, keys, leaves, out);
            }
            out.push('}');
        }
        1 => {
            out.push('[');
            for i in 0..rng.usize(..3) {
                if i > 0 {
                    out.push(',');
                }
                random_json(rng, depth - 1, keys, leaves, out);
            }
            out.push(']');
        }
        _ => out.push_str(leaves[rng.usize(..leaves.len())]),
    }
}

/// `bytes` cut short or with one byte changed.
pub(crate) fn damage(rng: &mut fastrand::Rng, mut bytes: Vec<u8>) -> Vec<u8> {
    if !bytes.is_empty() {
        let at = rng.usize(..bytes.len());
        if rng.bool() {
            bytes.truncate(at);
        } else {
            bytes[at] = rng.u8(..);
        }
    }
    bytes
}
