//! Building .prv lines: decimal numbers and short fixed pieces appended to a byte buffer.
//!
//! Why: appending each piece as a slice of its own length is a `memcpy` call per piece (a
//! kernel's two lines are some 60), and formatting numbers with `itoa` first is a second copy.
//! Here every piece is copied as a fixed-size block (a few inline moves) and the buffer is then
//! cut back to the piece's real length.

/// The two digits of 0..=99, for writing numbers two digits at a time.
const PAIRS: &[u8; 200] = b"\
0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// Digits of the largest u64.
const MAX_DIGITS: usize = 20;

/// Appends `v` in decimal, its digits written straight into the buffer's spare room.
///
/// From the last digit back: eight digits at a time as four independent pairs (one 64-bit
/// division per eight digits above 2^32, 32-bit arithmetic below: wasm has no 64-bit
/// multiply-high, so a 64-bit division by a constant stays a division there), then the leading
/// digits a pair at a time: independent pairs instead of a dependent chain with bounds checks.
#[inline]
pub fn push_u64(out: &mut Vec<u8>, v: u64) {
    out.reserve(MAX_DIGITS);
    let len = out.len();
    // SAFETY: MAX_DIGITS bytes after `len` are within the capacity reserved, and the digits
    // written there are initialised bytes.
    unsafe {
        let n = write_digits(out.as_mut_ptr().add(len), v);
        out.set_len(len + n);
    }
}

/// Writes the digits of `v` at `start`; returns how many.
///
/// # Safety
/// `start` must be valid for [`MAX_DIGITS`] bytes of writes.
#[inline]
unsafe fn write_digits(start: *mut u8, v: u64) -> usize {
    // SAFETY (the writes below): `start` is valid for MAX_DIGITS bytes (the caller's contract).
    let n = digits(v);
    // The writes go back from `start + n`, a block or a pair or a digit at a time, and together
    // cover exactly the `n` (≤ MAX_DIGITS) digits of `v` (debug-checked).
    let mut at = start.add(n);
    let mut x = v;
    while x > u64::from(u32::MAX) {
        at = at.sub(8);
        write_eight(at, (x % 100_000_000) as u32);
        x /= 100_000_000;
    }
    let mut y = x as u32;
    if y >= 100_000_000 {
        at = at.sub(8);
        write_eight(at, y % 100_000_000);
        y /= 100_000_000;
    }
    if at.offset_from(start) == 8 {
        write_eight(start, y);
    } else {
        while y >= 100 {
            at = at.sub(2);
            write_pair(at, y % 100);
            y /= 100;
        }
        if y >= 10 {
            at = at.sub(2);
            write_pair(at, y);
        } else {
            at = at.sub(1);
            *at = b'0' + y as u8;
        }
        debug_assert_eq!(at, start);
    }
    n
}

/// Writes the eight digits of `y` (< 10^8, with leading zeros) at `at`: four pairs computed
/// side by side rather than one after another.
///
/// # Safety
/// `at` must be valid for eight bytes of writes.
#[inline(always)]
unsafe fn write_eight(at: *mut u8, y: u32) {
    let (high, low) = (y / 10_000, y % 10_000);
    write_pair(at, high / 100);
    write_pair(at.add(2), high % 100);
    write_pair(at.add(4), low / 100);
    write_pair(at.add(6), low % 100);
}

/// Writes the two digits of `d` (< 100) at `at`.
///
/// # Safety
/// `at` must be valid for two bytes of writes.
#[inline(always)]
unsafe fn write_pair(at: *mut u8, d: u32) {
    debug_assert!(d < 100);
    std::ptr::copy_nonoverlapping(PAIRS.as_ptr().add(d as usize * 2), at, 2);
}

/// Number of decimal digits of `v`: log10 from the bit length (× 1233 / 4096 ≈ log10 2), then
/// one comparison with the power of ten there.
#[inline]
fn digits(v: u64) -> usize {
    const POW10: [u64; MAX_DIGITS] = {
        let mut p = [1u64; MAX_DIGITS];
        let mut i = 1;
        while i < MAX_DIGITS {
            p[i] = p[i - 1] * 10;
            i += 1;
        }
        p
    };
    let v = v | 1;
    let t = ((64 - v.leading_zeros()) as usize * 1233) >> 12;
    t + 1 - usize::from(v < POW10[t])
}

/// The timestamps formatted last, kept as text: a record's start and end go on its state line
/// and again on its event lines, so over half of the timestamps a trace writes were formatted a
/// moment before. A hit is four compares at most and a fixed-size copy; a miss formats as
/// [`push_u64`] does and keeps the text in the oldest slot.
pub struct Stamps {
    slots: [(u64, Piece<24>); STAMPS],
    next: usize,
}

/// Timestamps kept by [`Stamps`].
const STAMPS: usize = 4;

impl Default for Stamps {
    fn default() -> Self {
        // Every slot holds a real pair (the largest u64 and its digits): no slot is "empty".
        let max = (
            u64::MAX,
            Piece::new(&u64::MAX.to_string()).expect("20 digits fit"),
        );
        Stamps {
            slots: [max; STAMPS],
            next: 0,
        }
    }
}

impl Stamps {
    /// Appends `v` in decimal, as [`push_u64`].
    #[inline]
    pub fn push(&mut self, out: &mut Vec<u8>, v: u64) {
        if let Some((_, text)) = self.slots.iter().find(|(t, _)| *t == v) {
            text.push_to(out);
            return;
        }
        // Formatted into the oldest slot, then copied out as a hit is.
        let slot = &mut self.slots[self.next];
        // SAFETY: a slot's 24 bytes take the MAX_DIGITS (20) that `write_digits` may write.
        let n = unsafe { write_digits(slot.1.bytes.as_mut_ptr(), v) };
        slot.0 = v;
        slot.1.len = n as u8;
        slot.1.push_to(out);
        self.next = (self.next + 1) % STAMPS;
    }
}

/// A piece of at most `N` bytes (a line's prefix, an event type's `:type:`), kept in a
/// fixed-size block.
#[derive(Clone, Copy)]
pub struct Piece<const N: usize> {
    bytes: [u8; N],
    len: u8,
}

impl<const N: usize> Piece<N> {
    /// `s` as a piece, or `None` if it is longer than `N` bytes.
    pub fn new(s: &str) -> Option<Piece<N>> {
        let b = s.as_bytes();
        let mut bytes = [0u8; N];
        bytes.get_mut(..b.len())?.copy_from_slice(b);
        Some(Piece {
            bytes,
            len: u8::try_from(b.len()).ok()?,
        })
    }

    /// Appends the piece.
    #[inline]
    pub fn push_to(&self, out: &mut Vec<u8>) {
        let len = out.len();
        out.extend_from_slice(&self.bytes);
        out.truncate(len + usize::from(self.len));
    }
}

/// The start of a thread's event or state lines: `2:0:1:task:thread:` (two u32s fit).
pub type LinePrefix = Piece<48>;

/// An event type as its lines write it, `:type:` (a u32 fits).
pub type TypeText = Piece<16>;

impl TypeText {
    /// `:ty:`.
    pub fn of_type(ty: u32) -> TypeText {
        Piece::new(&format!(":{ty}:")).expect("a u32 fits a type's piece")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_as_itoa_writes_them() {
        let mut values: Vec<u64> = vec![0, 1, 9, 10, 99, 100, 101, 999, 1000, u64::MAX - 1];
        // Around the 32-bit and eight-digit-block boundaries.
        let big = u64::from(u32::MAX);
        values.extend([
            big - 1,
            big,
            big + 1,
            u64::MAX,
            4_200_000_000,
            100_000_000 * 42,
        ]);
        let mut p = 1u64;
        for _ in 0..19 {
            p *= 10;
            values.extend([p - 1, p, p + 1]);
        }
        // And a spread of others (a fixed LCG).
        let mut x = 12345u64;
        for _ in 0..10_000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            values.push(x >> (x % 64));
        }
        let mut out = b"x:".to_vec();
        let mut want = "x:".to_owned();
        for v in values {
            push_u64(&mut out, v);
            out.push(b':');
            want.push_str(itoa::Buffer::new().format(v));
            want.push(':');
        }
        assert_eq!(String::from_utf8(out).unwrap(), want);
    }

    #[test]
    fn stamps_write_what_push_u64_writes() {
        // Repeats near and far (past the slots kept), the largest u64 (the slots' first
        // contents) and a spread of others.
        let mut values = vec![
            u64::MAX,
            0,
            7,
            7,
            1_000_000_000_000,
            7,
            u64::MAX,
            12,
            13,
            14,
            15,
            7,
        ];
        let mut x = 99u64;
        for _ in 0..5_000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            values.push(values[values.len() - 1 - (x % 6) as usize].wrapping_add(x % 3));
        }
        let (mut stamps, mut got, mut want) = (Stamps::default(), Vec::new(), Vec::new());
        for v in values {
            stamps.push(&mut got, v);
            got.push(b':');
            push_u64(&mut want, v);
            want.push(b':');
        }
        assert_eq!(
            String::from_utf8(got).unwrap(),
            String::from_utf8(want).unwrap()
        );
    }

    #[test]
    fn pieces_append_exactly_their_bytes() {
        let p = LinePrefix::new("2:0:1:4294967295:4294967295:").unwrap();
        let mut out = b"ab".to_vec();
        p.push_to(&mut out);
        p.push_to(&mut out);
        assert_eq!(
            out,
            b"ab2:0:1:4294967295:4294967295:2:0:1:4294967295:4294967295:"
        );
        assert!(LinePrefix::new(&"x".repeat(48)).is_some());
        assert!(LinePrefix::new(&"x".repeat(49)).is_none());
        let mut out = Vec::new();
        TypeText::of_type(u32::MAX).push_to(&mut out);
        TypeText::of_type(7).push_to(&mut out);
        assert_eq!(out, b":4294967295::7:");
    }
}
