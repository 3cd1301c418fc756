//! JSON Pointers (RFC 6901) into policies and options, built while walking down.

/// `at` followed by the member `name` (`~` written `~0`, `/` written `~1`).
pub fn push(at: &str, name: &str) -> String {
    format!("{at}/{}", name.replace('~', "~0").replace('/', "~1"))
}

/// `at` followed by the array index `i`.
pub fn index(at: &str, i: usize) -> String {
    format!("{at}/{i}")
}

#[cfg(test)]
mod tests {
    #[test]
    fn escapes_as_rfc_6901_says() {
        assert_eq!(super::push("", "a/b~c"), "/a~1b~0c");
        assert_eq!(super::index("/x", 3), "/x/3");
        assert_eq!(super::push("/x", ""), "/x/");
    }
}
