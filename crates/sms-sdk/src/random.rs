//! Random identifiers: send ids and Vonage JWT ids.

/// A random (version 4) UUID, from the operating system's generator.
///
/// `getrandom` 0.2 is the major `ring` already brings in, so the providers' build holds one
/// `getrandom`. Should the operating system's generator fail, the bits come from `fastrand`:
/// these ids must be unique, not secret, and a send must not panic.
pub(crate) fn uuid_v4() -> uuid::Uuid {
    let mut bytes = [0_u8; 16];
    if getrandom::getrandom(&mut bytes).is_err() {
        bytes = fastrand::u128(..).to_le_bytes();
    }
    uuid::Builder::from_random_bytes(bytes).into_uuid()
}

#[cfg(test)]
mod tests {
    #[test]
    fn uuids_are_version_4_and_differ() {
        let (a, b) = (super::uuid_v4(), super::uuid_v4());
        assert_eq!(a.get_version_num(), 4);
        assert_ne!(a, b);
    }
}
