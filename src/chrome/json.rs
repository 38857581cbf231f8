//! The few JSON pieces the writer needs, appended to a byte buffer: times in µs with all their
//! nanoseconds, integers, escaped strings and one event's argument object.

/// `ns` as microseconds with three decimals (`1234567` → `1234.567`), by integer arithmetic:
/// a float would print `0.30000000000000004` for 300 ns or lose nanoseconds past 2^53.
pub fn push_us(out: &mut Vec<u8>, ns: u64) {
    push_u64(out, ns / 1000);
    let frac = ns % 1000;
    out.extend_from_slice(&[
        b'.',
        b'0' + (frac / 100) as u8,
        b'0' + (frac / 10 % 10) as u8,
        b'0' + (frac % 10) as u8,
    ]);
}

pub fn push_u64(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
}

pub fn push_i64(out: &mut Vec<u8>, v: i64) {
    out.extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
}

/// `s` as a JSON string literal, quotes and escapes included (names hold quotes, backslashes and
/// control characters: serde_json escapes them as the standard says).
pub fn push_str(out: &mut Vec<u8>, s: &str) {
    // Writing into a Vec cannot fail, and a &str always serializes.
    let _ = serde_json::to_writer(&mut *out, s);
}

/// `s` as a JSON string literal, owned (names are escaped once and kept).
pub fn quoted(s: &str) -> Box<str> {
    let mut v = Vec::with_capacity(s.len() + 2);
    push_str(&mut v, s);
    String::from_utf8(v)
        .unwrap_or_else(|_| "\"\"".to_owned())
        .into_boxed_str()
}

/// The members of one `"args":{…}` object, written as they are added; keys are fixed ASCII
/// identifiers of this module's callers, so they need no escaping.
pub struct Args<'a> {
    out: &'a mut Vec<u8>,
    members: usize,
}

impl<'a> Args<'a> {
    /// Opens `,"args":{` after an event's common fields.
    pub fn open(out: &'a mut Vec<u8>) -> Args<'a> {
        out.extend_from_slice(b",\"args\":{");
        Args { out, members: 0 }
    }

    fn key(&mut self, k: &str) -> &mut Vec<u8> {
        if self.members > 0 {
            self.out.push(b',');
        }
        self.members += 1;
        self.out.push(b'"');
        self.out.extend_from_slice(k.as_bytes());
        self.out.extend_from_slice(b"\":");
        self.out
    }

    pub fn u64(&mut self, k: &str, v: u64) {
        push_u64(self.key(k), v);
    }

    pub fn opt_u64(&mut self, k: &str, v: Option<u64>) {
        if let Some(v) = v {
            self.u64(k, v);
        }
    }

    pub fn opt_i64(&mut self, k: &str, v: Option<i64>) {
        if let Some(v) = v {
            push_i64(self.key(k), v);
        }
    }

    pub fn str(&mut self, k: &str, v: &str) {
        push_str(self.key(k), v);
    }

    /// A string already quoted and escaped ([`quoted`]).
    pub fn quoted(&mut self, k: &str, v: &str) {
        self.key(k).extend_from_slice(v.as_bytes());
    }

    pub fn bool(&mut self, k: &str, v: bool) {
        let text: &[u8] = if v { b"true" } else { b"false" };
        self.key(k).extend_from_slice(text);
    }

    pub fn triple(&mut self, k: &str, v: [u32; 3]) {
        let out = self.key(k);
        out.push(b'[');
        for (i, x) in v.into_iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            push_u64(out, u64::from(x));
        }
        out.push(b']');
    }

    /// Closes the object and the event.
    pub fn close(self) {
        self.out.extend_from_slice(b"}}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn microseconds_keep_every_nanosecond() {
        let us = |ns| {
            let mut v = Vec::new();
            push_us(&mut v, ns);
            String::from_utf8(v).unwrap()
        };
        assert_eq!(us(0), "0.000");
        assert_eq!(us(7), "0.007");
        assert_eq!(us(300), "0.300");
        assert_eq!(us(1_234_567), "1234.567");
        assert_eq!(us(u64::MAX), "18446744073709551.615");
    }

    #[test]
    fn strings_are_escaped_as_json() {
        let s = "k<\"a\\b\">\n\u{1}é";
        let q = quoted(s);
        assert_eq!(&*q, "\"k<\\\"a\\\\b\\\">\\n\\u0001é\"");
        assert_eq!(serde_json::from_str::<String>(&q).unwrap(), s);
    }
}
