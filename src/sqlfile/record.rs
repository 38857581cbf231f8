//! Records: a header of serial types, then the values
//! (<https://www.sqlite.org/fileformat2.html#record_format>).

use rusqlite::types::ValueRef;

use super::{varint, Damaged};

/// How a column's declared type makes SQLite treat its values. Only REAL changes what a read
/// gives: SQLite stores a REAL column's integral values as integers and turns them back into
/// reals when they are read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Affinity {
    Integer,
    Text,
    Blob,
    Real,
    Numeric,
}

impl Affinity {
    /// The affinity of a declared type, by SQLite's rules in their order (datatype3.html, 3.1).
    pub fn of_declared(declared: &str) -> Affinity {
        let t = declared.to_ascii_uppercase();
        if t.contains("INT") {
            Affinity::Integer
        } else if t.contains("CHAR") || t.contains("CLOB") || t.contains("TEXT") {
            Affinity::Text
        } else if t.contains("BLOB") || t.is_empty() {
            Affinity::Blob
        } else if t.contains("REAL") || t.contains("FLOA") || t.contains("DOUB") {
            Affinity::Real
        } else {
            Affinity::Numeric
        }
    }
}

/// The parsed header of one record: where each of its first columns lies, its type, and its
/// integer already decoded. Kept between rows so that parsing allocates nothing.
#[derive(Default)]
pub struct Record {
    cols: Vec<Col>,
}

/// One column of a parsed record, in 16 bytes (a record's payload is under 4 GiB: see
/// [`Record::parse`]).
#[derive(Clone, Copy)]
struct Col {
    /// Serial types 1–6: the integer; 7: the bits of the double; other types: not read.
    int: i64,
    /// Where the value starts in the payload.
    at: u32,
    /// The serial type.
    serial: u32,
}

impl Record {
    /// Parses the header of `payload` for its first `upto` columns (fewer if the record has
    /// fewer: the later ones read as NULL, as SQLite gives a column added after the row).
    /// Numbers are decoded here, with no branch on the serial type, which would be mispredicted.
    pub fn parse(&mut self, payload: &[u8], upto: usize) -> Result<(), Damaged> {
        self.cols.clear();
        let bad = |why: &str| Damaged(format!("a record's header {why}"));
        // Offsets and serial types are kept in 32 bits: a payload SQLite writes is at most
        // 1 GB (SQLITE_MAX_LENGTH), and a value that would start past 4 GiB starts past the
        // payload.
        if payload.len() > u32::MAX as usize {
            return Err(Damaged(format!(
                "a record of {} bytes (SQLite's are at most 1 GB)",
                payload.len()
            )));
        }
        let (header_len, n) = match payload.first() {
            Some(&b) if b < 0x80 => (u64::from(b), 1),
            _ => varint(payload, 0).ok_or_else(|| bad("is cut short"))?,
        };
        let header_len = usize::try_from(header_len)
            .ok()
            .filter(|&h| h >= n && h <= payload.len())
            .ok_or_else(|| bad("is longer than the record"))?;
        let header = &payload[..header_len];
        // Every column takes one header byte at least: room for all is made once, so that
        // each column below is one write, without a capacity check.
        let most = upto.min(header_len - n);
        self.cols.reserve(most);
        let cols = &mut self.cols.spare_capacity_mut()[..most];
        let (mut at, mut offset, mut k) = (n, header_len, 0usize);
        // Whether a reserved serial type (10, 11) was met: told after the loop, which has no
        // branch on the serial type.
        let mut reserved = false;
        while at < header_len && k < most {
            let b = header[at];
            let (serial, int, size) = if b < 0x80 {
                at += 1;
                let e = SERIALS[usize::from(b)];
                reserved |= e.reserved;
                e.column(u32::from(b), payload, offset)
            } else {
                match long_serial(header, at, payload, offset) {
                    Ok((parsed, next)) => {
                        at = next;
                        parsed
                    }
                    Err(why) => {
                        self.cols.clear();
                        // A reserved type met before is the first fault, as it was found.
                        return Err(bad(if reserved { RESERVED } else { why }));
                    }
                }
            };
            // The offset is cut to 32 bits here and checked whole below: offsets only grow,
            // so where the last fits the payload (under 4 GiB) every one before it does.
            cols[k].write(Col {
                int,
                at: offset as u32,
                serial,
            });
            k += 1;
            offset = offset.saturating_add(size);
        }
        // SAFETY: the first `k` columns of the spare capacity were written just above.
        unsafe { self.cols.set_len(k) };
        if reserved {
            self.cols.clear();
            return Err(bad(RESERVED));
        }
        // Sizes only add up: the last value's end bounds them all.
        if offset > payload.len() {
            self.cols.clear();
            return Err(bad("gives values beyond the record's end"));
        }
        // Only there can a value end within the payload's first 8 bytes (every value ends
        // past the header).
        if header_len < 8 {
            numbers_near_start(&mut self.cols, payload);
        }
        Ok(())
    }

    /// Column `i` of `payload` (the payload [`parse`](Self::parse) was given), as SQLite reads
    /// it from a column of this affinity.
    #[inline]
    pub fn value<'p>(&self, payload: &'p [u8], i: usize, affinity: Affinity) -> ValueRef<'p> {
        if affinity == Affinity::Real {
            self.real_value(payload, i)
        } else {
            self.stored_value(payload, i)
        }
    }

    /// [`value`](Self::value) for a column of any affinity but REAL (only REAL changes what a
    /// read gives): split so that a compiled query chooses once, not a test per value.
    #[inline(always)]
    pub fn stored_value<'p>(&self, payload: &'p [u8], i: usize) -> ValueRef<'p> {
        self.read(payload, i, ValueRef::Integer)
    }

    /// [`value`](Self::value) for a column of REAL affinity: its integers read as reals.
    #[inline(always)]
    pub fn real_value<'p>(&self, payload: &'p [u8], i: usize) -> ValueRef<'p> {
        self.read(payload, i, |x| ValueRef::Real(x as f64))
    }

    /// Column `i`, its integers given by `integer`.
    #[inline(always)]
    fn read<'p>(
        &self,
        payload: &'p [u8],
        i: usize,
        integer: impl Fn(i64) -> ValueRef<'p>,
    ) -> ValueRef<'p> {
        let Some(&Col { int, at, serial }) = self.cols.get(i) else {
            return ValueRef::Null;
        };
        let (at, serial) = (at as usize, u64::from(serial));
        match serial {
            1..=6 => integer(int),
            0 => ValueRef::Null,
            // 0 and 1, in no bytes (their parsed number is not theirs): an arm of their own,
            // not a test on the integers' way.
            8 | 9 => integer(serial as i64 - 8),
            7 => {
                let x = f64::from_bits(int as u64);
                // SQLite reads a stored NaN as NULL.
                if x.is_nan() {
                    ValueRef::Null
                } else {
                    ValueRef::Real(x)
                }
            }
            _ => {
                let len = ((serial - 12) / 2) as usize;
                let bytes = &payload[at..at + len];
                if serial % 2 == 0 {
                    ValueRef::Blob(bytes)
                } else {
                    ValueRef::Text(bytes)
                }
            }
        }
    }
}

/// What a one-byte serial type (below 128) says: its value's size, and how its number comes
/// out of the 8 big-endian bytes that end where the value ends — shifted left by `shift`, then
/// arithmetically right by as much (types 1–6 give their integer, 7 the double's bits; the
/// number of any other type is never read). So every column's number is the same few
/// operations, without a branch on its type; the bytes that *end* the value are read because
/// those lie in the payload even for its last values.
#[derive(Clone, Copy)]
struct Serial {
    size: u8,
    shift: u8,
    /// 10 and 11.
    reserved: bool,
}

impl Serial {
    /// The number of a value of this type whose bytes end `raw` (big-endian).
    #[inline(always)]
    fn number(self, raw: u64) -> i64 {
        ((raw << self.shift) as i64) >> self.shift
    }

    /// (type, number, size) of a column of this type, `serial`, whose value starts at `offset`
    /// of `payload` (a value that would end past the payload fails once the header is read).
    #[inline(always)]
    fn column(self, serial: u32, payload: &[u8], offset: usize) -> (u32, i64, usize) {
        let size = usize::from(self.size);
        let raw = be8_ending(payload, offset.saturating_add(size).min(payload.len()));
        (serial, self.number(raw), size)
    }
}

/// [`Serial`] of each one-byte serial type.
const SERIALS: [Serial; 128] = {
    const FIXED_SIZES: [u8; 10] = [0, 1, 2, 3, 4, 6, 8, 8, 0, 0];
    let mut t = [Serial {
        size: 0,
        shift: 0,
        reserved: false,
    }; 128];
    let mut s = 0;
    while s < 128 {
        t[s] = match s {
            0 | 8 | 9 => t[s],
            1..=7 => Serial {
                size: FIXED_SIZES[s],
                shift: 64 - 8 * FIXED_SIZES[s],
                ..t[s]
            },
            10 | 11 => Serial {
                reserved: true,
                ..t[s]
            },
            _ => Serial {
                size: ((s - 12) / 2) as u8,
                ..t[s]
            },
        };
        s += 1;
    }
    t
};

/// What a header with a reserved serial type is.
const RESERVED: &str = "has a reserved serial type (10 or 11)";

/// A serial type of more than one byte (long text and blobs) at `header[at..]`: (type, number,
/// size) as the one-byte path gives them and where the next type starts, or what is wrong.
#[cold]
#[inline(never)]
fn long_serial(
    header: &[u8],
    at: usize,
    payload: &[u8],
    offset: usize,
) -> Result<((u32, i64, usize), usize), &'static str> {
    let (serial, n) = varint(header, at).ok_or("is cut short")?;
    // A value that starts past 4 GiB, or is longer, ends past the payload.
    let beyond = "gives values beyond the record's end";
    let parsed = match serial {
        0..=127 if SERIALS[serial as usize].reserved => return Err(RESERVED),
        0..=127 => SERIALS[serial as usize].column(serial as u32, payload, offset),
        _ => (
            u32::try_from(serial).map_err(|_| beyond)?,
            0,
            usize::try_from((serial - 12) / 2).map_err(|_| beyond)?,
        ),
    };
    Ok((parsed, at + n))
}

/// The 8 bytes of `payload` that end at `end`, big-endian; 0 where `end` is within its
/// first 8 bytes (or past its end), which [`numbers_near_start`] mends after the header's loop.
#[inline(always)]
fn be8_ending(payload: &[u8], end: usize) -> u64 {
    match payload.get(end.wrapping_sub(8)..end) {
        Some(b) => u64::from_be_bytes(b.try_into().expect("8 bytes")),
        None => 0,
    }
}

/// The numbers of the values of `cols` (a header's one-byte types, parsed from `payload`) that
/// end within its first 8 bytes, where [`be8_ending`] read none (out of line, for the loop's sake).
#[inline(never)]
fn numbers_near_start(cols: &mut [Col], payload: &[u8]) {
    for col in cols.iter_mut().filter(|c| c.serial < 128) {
        let e = SERIALS[col.serial as usize];
        let end = col.at as usize + usize::from(e.size);
        if end < 8 {
            let raw = payload[..end]
                .iter()
                .fold(0u64, |raw, &b| raw << 8 | u64::from(b));
            col.int = e.number(raw);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn affinity_follows_sqlites_rules_in_order() {
        use Affinity::*;
        for (t, a) in [
            ("INTEGER", Integer),
            ("BIGINT", Integer),
            ("int", Integer),
            ("VARCHAR(20)", Text),
            ("TEXT", Text),
            ("CLOB", Text),
            ("BLOB", Blob),
            ("", Blob),
            ("REAL", Real),
            ("DOUBLE PRECISION", Real),
            ("FLOAT", Real),
            ("NUMERIC", Numeric),
            ("DECIMAL(10,5)", Numeric),
            ("BOOLEAN", Numeric),
            // INT is checked first: "FLOATING POINT" holds "INT".
            ("FLOATING POINT", Integer),
            ("CHARINT", Integer),
        ] {
            assert_eq!(Affinity::of_declared(t), a, "{t}");
        }
    }

    /// A record of the given serial types and value bytes, as SQLite lays it out.
    fn record(serials: &[u8], values: &[u8]) -> Vec<u8> {
        let mut p = vec![1 + serials.len() as u8];
        p.extend_from_slice(serials);
        p.extend_from_slice(values);
        p
    }

    #[test]
    fn integers_of_every_width_read_as_sqlite_stores_them() {
        // (serial type, big-endian bytes, value): the extremes of each width, both signs.
        let cases: [(u8, &[u8], i64); 16] = [
            (1, &[0x7f], 127),
            (1, &[0x80], -128),
            (2, &[0x7f, 0xff], 32767),
            (2, &[0x80, 0x00], -32768),
            (3, &[0x7f, 0xff, 0xff], 8_388_607),
            (3, &[0xff, 0xff, 0xfe], -2),
            (4, &[0x80, 0, 0, 0], i64::from(i32::MIN)),
            (4, &[0x12, 0x34, 0x56, 0x78], 0x1234_5678),
            (5, &[0x7f, 0xff, 0xff, 0xff, 0xff, 0xff], (1 << 47) - 1),
            (5, &[0x80, 0, 0, 0, 0, 0], -(1 << 47)),
            (
                6,
                &[0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff],
                i64::MAX,
            ),
            (6, &[0x80, 0, 0, 0, 0, 0, 0, 1], i64::MIN + 1),
            (
                6,
                &[0x17, 0x85, 0x0f, 0x4a, 0x2b, 0x3c, 0x4d, 0x5e],
                0x1785_0f4a_2b3c_4d5e,
            ),
            (8, &[], 0),
            (9, &[], 1),
            (1, &[0xff], -1),
        ];
        let mut r = Record::default();
        for (serial, bytes, want) in cases {
            // Alone (the value ends the payload: fewer than 8 bytes after its start), and
            // followed by a text and another integer (the load reads past the value).
            let alone = record(&[serial], bytes);
            r.parse(&alone, 8).unwrap();
            assert_eq!(
                r.value(&alone, 0, Affinity::Integer),
                ValueRef::Integer(want)
            );
            assert_eq!(
                r.value(&alone, 0, Affinity::Real),
                ValueRef::Real(want as f64)
            );
            let mut values = bytes.to_vec();
            values.extend_from_slice(b"abcdefgh\xff");
            let followed = record(&[serial, 12 + 2 * 8 + 1, 1], &values);
            r.parse(&followed, 8).unwrap();
            assert_eq!(
                r.value(&followed, 0, Affinity::Integer),
                ValueRef::Integer(want)
            );
            assert_eq!(
                r.value(&followed, 1, Affinity::Text),
                ValueRef::Text(b"abcdefgh")
            );
            assert_eq!(
                r.value(&followed, 2, Affinity::Integer),
                ValueRef::Integer(-1)
            );
        }
    }

    #[test]
    fn numbers_read_whole_wherever_they_end() {
        // A header of 10 bytes (every value ends past the payload's 8th byte), the last value
        // ending the payload; then a header of 3 bytes whose first value ends at its 4th byte
        // and whose second ends past the 8th.
        let mut r = Record::default();
        let mut serials = vec![0u8; 7];
        serials.extend_from_slice(&[1, 6]);
        let mut values = vec![0x80];
        values.extend_from_slice(&(-3i64).to_be_bytes());
        let p = record(&serials, &values);
        r.parse(&p, 16).unwrap();
        assert_eq!(r.value(&p, 6, Affinity::Integer), ValueRef::Null);
        assert_eq!(r.value(&p, 7, Affinity::Integer), ValueRef::Integer(-128));
        assert_eq!(r.value(&p, 8, Affinity::Integer), ValueRef::Integer(-3));
        let p = record(&[1, 4], &[0x05, 0xff, 0xff, 0xff, 0xfe]);
        r.parse(&p, 16).unwrap();
        assert_eq!(r.value(&p, 0, Affinity::Integer), ValueRef::Integer(5));
        assert_eq!(r.value(&p, 1, Affinity::Integer), ValueRef::Integer(-2));
    }

    #[test]
    fn reals_read_as_sqlite_reads_them() {
        let mut r = Record::default();
        let p = record(
            &[7, 7],
            &[(-2.5f64).to_be_bytes(), f64::NAN.to_be_bytes()].concat(),
        );
        r.parse(&p, 8).unwrap();
        assert_eq!(r.value(&p, 0, Affinity::Real), ValueRef::Real(-2.5));
        assert_eq!(r.value(&p, 0, Affinity::Integer), ValueRef::Real(-2.5));
        // SQLite reads a stored NaN as NULL.
        assert_eq!(r.value(&p, 1, Affinity::Real), ValueRef::Null);
    }

    #[test]
    fn damaged_headers_are_errors() {
        let mut r = Record::default();
        // Header longer than the payload.
        assert!(r.parse(&[9, 1], 8).is_err());
        // A value past the end: header says one 8-byte integer, payload has 2 bytes.
        assert!(r.parse(&[2, 6, 0, 0], 8).is_err());
        // Reserved serial types.
        assert!(r.parse(&[2, 10], 8).is_err());
        // Empty payload.
        assert!(r.parse(&[], 8).is_err());
        // A sound record: NULL, 1-byte -1, text "ab".
        let p = [4, 0, 1, 17, 0xff, b'a', b'b'];
        r.parse(&p, 8).unwrap();
        assert_eq!(r.value(&p, 0, Affinity::Integer), ValueRef::Null);
        assert_eq!(r.value(&p, 1, Affinity::Integer), ValueRef::Integer(-1));
        assert_eq!(r.value(&p, 1, Affinity::Real), ValueRef::Real(-1.0));
        assert_eq!(r.value(&p, 2, Affinity::Text), ValueRef::Text(b"ab"));
        assert_eq!(r.value(&p, 3, Affinity::Integer), ValueRef::Null);
        // Only the columns asked for are parsed.
        r.parse(&p, 1).unwrap();
        assert_eq!(r.value(&p, 1, Affinity::Integer), ValueRef::Null);
        // A small type in two header bytes (SQLite writes none, a varint allows it) reads as
        // in one; a reserved one so written is an error too, also after a sound column.
        let p = [4, 0x80, 0x01, 9, 0xfe];
        r.parse(&p, 8).unwrap();
        assert_eq!(r.value(&p, 0, Affinity::Integer), ValueRef::Integer(-2));
        assert_eq!(r.value(&p, 1, Affinity::Integer), ValueRef::Integer(1));
        let err = r.parse(&[4, 1, 0x80, 0x0b, 7], 8).unwrap_err();
        assert!(err.0.contains("reserved"), "{}", err.0);
        // A reserved type before a varint cut short: the first fault is told.
        let err = r.parse(&[3, 10, 0x81], 8).unwrap_err();
        assert!(err.0.contains("reserved"), "{}", err.0);
        let err = r.parse(&[3, 1, 0x81], 8).unwrap_err();
        assert!(err.0.contains("cut short"), "{}", err.0);
    }

    #[test]
    fn serial_types_beyond_32_bits_are_values_past_the_end() {
        let mut r = Record::default();
        // A text of 2^31 bytes (serial type 2^32 + 13, a five-byte varint), then an integer:
        // its length does not fit the record's columns, nor would its end fit the payload.
        let huge = [0x90, 0x80, 0x80, 0x80, 0x0d];
        let mut p = vec![1 + huge.len() as u8 + 1];
        p.extend_from_slice(&huge);
        p.extend_from_slice(&[1, b'x', 7]);
        let err = r.parse(&p, 8).unwrap_err();
        assert!(err.0.contains("beyond the record's end"), "{}", err.0);
        // A failed parse leaves no columns: every value reads as NULL, none from the record
        // parsed before it.
        let sound = [2, 1, 42];
        r.parse(&sound, 8).unwrap();
        assert_eq!(r.value(&sound, 0, Affinity::Integer), ValueRef::Integer(42));
        assert!(r.parse(&[3, 1, 6, 0], 8).is_err());
        assert_eq!(r.value(&sound, 0, Affinity::Integer), ValueRef::Null);
    }
}
