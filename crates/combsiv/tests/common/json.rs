//! The vector files' JSON and hex, read with plain byte loops.
//!
//! Under Miri, which runs the kernel tests on CPUs without VAES, `serde_json` takes about
//! 20 seconds to parse `rfc8452.json` and the `hex` crate milliseconds per byte; these loops
//! take about a second per file. The files hold objects, arrays, strings (escapes `\"`,
//! `\\`, `\/`, `\n`, `\t`) and integers, which is all this reader accepts: anything else
//! panics, so a malformed file fails the test that reads it.

#![allow(dead_code, reason = "each test crate uses a different part")]

// The library's unit tests include this file too, in a `no_std` crate.
use std::string::String;
use std::vec::Vec;

use serde_json::{Map, Number, Value};

/// Parses a whole JSON document.
pub fn parse(text: &str) -> Value {
    let mut reader = Reader {
        bytes: text.as_bytes(),
        at: 0,
    };
    let value = reader.value();
    reader.skip_space();
    assert_eq!(
        reader.at,
        reader.bytes.len(),
        "trailing bytes after the JSON value"
    );
    value
}

/// Decodes a string of hex digits (either case).
pub fn decode_hex(text: &str) -> Vec<u8> {
    let digits = text.as_bytes();
    assert!(
        digits.len().is_multiple_of(2),
        "odd number of hex digits: {text:?}"
    );
    let value = |digit: u8| match digit {
        b'0'..=b'9' => digit - b'0',
        b'a'..=b'f' => digit - b'a' + 10,
        b'A'..=b'F' => digit - b'A' + 10,
        _ => panic!("not a hex digit: {:?} in {text:?}", digit as char),
    };
    let mut bytes = Vec::with_capacity(digits.len() / 2);
    let mut i = 0;
    while i < digits.len() {
        bytes.push(value(digits[i]) << 4 | value(digits[i + 1]));
        i += 2;
    }
    bytes
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn peek(&self) -> u8 {
        *self.bytes.get(self.at).expect("JSON ends early")
    }

    fn expect(&mut self, byte: u8) {
        self.skip_space();
        assert_eq!(
            self.peek(),
            byte,
            "expected {:?} at byte {}",
            byte as char,
            self.at
        );
        self.at += 1;
    }

    fn skip_space(&mut self) {
        while self.at < self.bytes.len() && self.bytes[self.at].is_ascii_whitespace() {
            self.at += 1;
        }
    }

    fn value(&mut self) -> Value {
        self.skip_space();
        match self.peek() {
            b'{' => self.object(),
            b'[' => self.array(),
            b'"' => Value::String(self.string()),
            b'-' | b'0'..=b'9' => self.integer(),
            other => panic!("unexpected {:?} at byte {}", other as char, self.at),
        }
    }

    fn object(&mut self) -> Value {
        self.expect(b'{');
        let mut map = Map::new();
        self.skip_space();
        if self.peek() == b'}' {
            self.at += 1;
            return Value::Object(map);
        }
        loop {
            self.skip_space();
            let key = self.string();
            self.expect(b':');
            map.insert(key, self.value());
            self.skip_space();
            self.at += 1;
            match self.bytes[self.at - 1] {
                b',' => continue,
                b'}' => return Value::Object(map),
                other => panic!("expected , or }} but found {:?}", other as char),
            }
        }
    }

    fn array(&mut self) -> Value {
        self.expect(b'[');
        let mut items = Vec::new();
        self.skip_space();
        if self.peek() == b']' {
            self.at += 1;
            return Value::Array(items);
        }
        loop {
            items.push(self.value());
            self.skip_space();
            self.at += 1;
            match self.bytes[self.at - 1] {
                b',' => continue,
                b']' => return Value::Array(items),
                other => panic!("expected , or ] but found {:?}", other as char),
            }
        }
    }

    /// A string, copied a run of plain bytes at a time (one push per byte is what makes a
    /// parser slow under Miri).
    fn string(&mut self) -> String {
        self.expect(b'"');
        let mut bytes = Vec::new();
        loop {
            let start = self.at;
            while !matches!(self.peek(), b'"' | b'\\') {
                self.at += 1;
            }
            bytes.extend_from_slice(&self.bytes[start..self.at]);
            self.at += 1;
            if self.bytes[self.at - 1] == b'"' {
                break;
            }
            let escaped = self.peek();
            self.at += 1;
            bytes.push(match escaped {
                b'"' | b'\\' | b'/' => escaped,
                b'n' => b'\n',
                b't' => b'\t',
                other => panic!("unsupported escape \\{}", other as char),
            });
        }
        String::from_utf8(bytes).expect("UTF-8 string")
    }

    fn integer(&mut self) -> Value {
        let start = self.at;
        if self.peek() == b'-' {
            self.at += 1;
        }
        while self.at < self.bytes.len() && self.bytes[self.at].is_ascii_digit() {
            self.at += 1;
        }
        let text = std::str::from_utf8(&self.bytes[start..self.at]).expect("ASCII digits");
        let number: i64 = text.parse().expect("an integer");
        Value::Number(Number::from(number))
    }
}
