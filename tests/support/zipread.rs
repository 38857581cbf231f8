//! A strict little zip reader for tests: walks the central directory, reads each local header
//! and data descriptor, inflates, and checks every CRC and size against each other. Any
//! inconsistency is an `Err` naming the entry.

#![allow(dead_code)]

use std::io::Read;

pub struct Entry {
    pub name: String,
    pub method: u16,
    pub data: Vec<u8>,
}

fn u16_at(b: &[u8], at: usize) -> Result<u16, String> {
    b.get(at..at + 2)
        .map(|s| u16::from_le_bytes([s[0], s[1]]))
        .ok_or_else(|| format!("truncated at {at}"))
}

fn u32_at(b: &[u8], at: usize) -> Result<u32, String> {
    b.get(at..at + 4)
        .map(|s| u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
        .ok_or_else(|| format!("truncated at {at}"))
}

pub fn read_zip(zip: &[u8]) -> Result<Vec<Entry>, String> {
    if zip.len() < 22 {
        return Err("shorter than an end record".into());
    }
    let eocd = zip.len() - 22;
    if u32_at(zip, eocd)? != 0x0605_4b50 {
        return Err("no end-of-central-directory record at the end".into());
    }
    let n = u16_at(zip, eocd + 10)? as usize;
    let cd_size = u32_at(zip, eocd + 12)? as usize;
    let cd_start = u32_at(zip, eocd + 16)? as usize;
    if cd_start + cd_size != eocd {
        return Err(format!(
            "central directory {cd_start}+{cd_size} does not end at {eocd}"
        ));
    }
    let mut out = Vec::new();
    let mut p = cd_start;
    for _ in 0..n {
        if u32_at(zip, p)? != 0x0201_4b50 {
            return Err(format!("bad central header signature at {p}"));
        }
        let flags = u16_at(zip, p + 8)?;
        let method = u16_at(zip, p + 10)?;
        let crc = u32_at(zip, p + 16)?;
        let csize = u32_at(zip, p + 20)? as usize;
        let usize_ = u32_at(zip, p + 24)? as usize;
        let name_len = u16_at(zip, p + 28)? as usize;
        let extra_len = u16_at(zip, p + 30)? as usize;
        let comment_len = u16_at(zip, p + 32)? as usize;
        let local = u32_at(zip, p + 42)? as usize;
        let name = String::from_utf8(zip[p + 46..p + 46 + name_len].to_vec())
            .map_err(|_| "name is not UTF-8".to_string())?;
        p += 46 + name_len + extra_len + comment_len;

        if u32_at(zip, local)? != 0x0403_4b50 {
            return Err(format!("{name}: bad local header signature"));
        }
        if u16_at(zip, local + 6)? != flags || u16_at(zip, local + 8)? != method {
            return Err(format!(
                "{name}: local header disagrees with the central directory"
            ));
        }
        let lname = u16_at(zip, local + 26)? as usize;
        let lextra = u16_at(zip, local + 28)? as usize;
        if zip.get(local + 30..local + 30 + lname) != Some(name.as_bytes()) {
            return Err(format!("{name}: local name differs"));
        }
        let data_at = local + 30 + lname + lextra;
        let raw = zip
            .get(data_at..data_at + csize)
            .ok_or_else(|| format!("{name}: data runs past the end"))?;
        let data = match method {
            0 => raw.to_vec(),
            8 => {
                let mut v = Vec::new();
                flate2::read::DeflateDecoder::new(raw)
                    .read_to_end(&mut v)
                    .map_err(|e| format!("{name}: inflate: {e}"))?;
                v
            }
            m => return Err(format!("{name}: unknown method {m}")),
        };
        if data.len() != usize_ {
            return Err(format!("{name}: size {} != {usize_}", data.len()));
        }
        let mut c = flate2::Crc::new();
        c.update(&data);
        if c.sum() != crc {
            return Err(format!("{name}: CRC mismatch"));
        }
        if flags & 8 != 0 {
            let d = data_at + csize;
            if u32_at(zip, d)? != 0x0807_4b50
                || u32_at(zip, d + 4)? != crc
                || u32_at(zip, d + 8)? as usize != csize
                || u32_at(zip, d + 12)? as usize != usize_
            {
                return Err(format!("{name}: data descriptor disagrees"));
            }
        }
        out.push(Entry { name, method, data });
    }
    if p != eocd {
        return Err("central directory has trailing bytes".into());
    }
    Ok(out)
}
