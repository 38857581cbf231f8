//! An LRU cache of fixed-size blocks in front of a [`ReadAt`] source.
//!
//! Why: SQLite reads one page (4 KiB) at a time, and in the browser each source read is a
//! `Blob.slice` + `FileReaderSync` call costing milliseconds whatever its size, so pages are
//! served from large blocks (see [`CacheConfig::for_files`]). The cache holds at most `blocks`
//! blocks, so memory stays bounded on multi-GB files.

use std::io;

use super::source::ReadAt;
use crate::FastMap;

/// Block size and count of a cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CacheConfig {
    pub block_bytes: usize,
    pub blocks: usize,
}

impl Default for CacheConfig {
    /// 32 blocks of 1 MiB: the measured sweet spot; 32 MiB of memory per open file.
    fn default() -> Self {
        CacheConfig {
            block_bytes: 1 << 20,
            blocks: 32,
        }
    }
}

/// Memory the caches of files opened together may use to hold each file whole.
pub const WHOLE_FILE_BUDGET: u64 = 160 << 20;
/// Memory the caches of files opened together use when they are too large to hold.
const PARTIAL_BUDGET: u64 = 144 << 20;
/// Blocks: large where there is room for enough of them, since each read of the user's file in
/// the browser (`Blob.slice` + `FileReaderSync`) has a fixed cost of milliseconds.
const LARGE_BLOCK: usize = 8 << 20;
const SMALL_BLOCK: usize = 1 << 20;
/// A file held whole is read in blocks this large: every block is read once and all of them
/// early, so fewer, larger reads only save their fixed cost; 32 MiB bounds the JS buffer of one
/// read.
const WHOLE_FILE_BLOCK: usize = 32 << 20;
/// Large blocks need this many of them in a partial cache: the scans made side by side and the
/// reading's cursors are spread over a few dozen MiB, and fewer, larger blocks load the same
/// bytes again.
const MIN_LARGE_BLOCKS: u64 = 12;

impl CacheConfig {
    /// Caches for files of these sizes opened together. A conversion scans each table several
    /// times, and nsys writes its tables' pages interleaved, so every scan touches every block of
    /// the file: a cache smaller than the file loads it again on each scan. So a file whose share of [`WHOLE_FILE_BUDGET`] holds
    /// it whole gets room for all of it, in blocks of [`WHOLE_FILE_BLOCK`] (each loaded once,
    /// allocated only as read). A larger file gets its share of [`PARTIAL_BUDGET`]: large
    /// blocks where at least [`MIN_LARGE_BLOCKS`] fit in it, else 8 to 48 blocks of 1 MiB (more
    /// saves nothing there).
    pub fn for_files(sizes: &[u64]) -> Vec<CacheConfig> {
        let n = sizes.len().max(1) as u64;
        let share = WHOLE_FILE_BUDGET / n;
        let partial_share = PARTIAL_BUDGET / n;
        let large = LARGE_BLOCK as u64;
        sizes
            .iter()
            .map(|&size| {
                if size <= share {
                    CacheConfig {
                        block_bytes: WHOLE_FILE_BLOCK,
                        blocks: size.div_ceil(WHOLE_FILE_BLOCK as u64).max(1) as usize,
                    }
                } else if partial_share / large >= MIN_LARGE_BLOCKS {
                    CacheConfig {
                        block_bytes: LARGE_BLOCK,
                        blocks: (partial_share / large) as usize,
                    }
                } else {
                    CacheConfig {
                        block_bytes: SMALL_BLOCK,
                        blocks: (partial_share / SMALL_BLOCK as u64).clamp(8, 48) as usize,
                    }
                }
            })
            .collect()
    }
}

/// What the cache did, for tests and tuning.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Calls to the source (one per block loaded).
    pub source_reads: u64,
    /// Bytes loaded from the source.
    pub source_bytes: u64,
    /// Reads served (`read` calls).
    pub reads: u64,
}

struct Block {
    index: u64,
    data: Vec<u8>,
    last_used: u64,
}

pub struct BlockCache {
    src: Box<dyn ReadAt>,
    size: u64,
    config: CacheConfig,
    blocks: Vec<Block>,
    /// Block index → its slot in `blocks`, for the blocks held.
    slots: FastMap<u64, usize>,
    clock: u64,
    stats: CacheStats,
}

impl BlockCache {
    pub fn new(src: Box<dyn ReadAt>, config: CacheConfig) -> BlockCache {
        let config = CacheConfig {
            block_bytes: Self::block_len(config),
            blocks: config.blocks.max(1),
        };
        BlockCache {
            size: src.size(),
            src,
            config,
            blocks: Vec::new(),
            slots: FastMap::default(),
            clock: 0,
            stats: CacheStats::default(),
        }
    }

    /// The bytes of a block of a cache made with `config` (the last block of a source may be
    /// shorter).
    pub fn block_len(config: CacheConfig) -> usize {
        config.block_bytes.max(512)
    }

    pub fn size(&self) -> u64 {
        self.size
    }

    /// Holds `data`, read from the source already, as block 0 (counted as a load), where it is
    /// that block's bytes in full and nothing is held yet; else drops it.
    pub fn hold_first_block(&mut self, data: Vec<u8>) {
        if data.len() != self.len_of(0) || !self.blocks.is_empty() {
            return;
        }
        self.clock += 1;
        self.stats.source_reads += 1;
        self.stats.source_bytes += data.len() as u64;
        self.blocks.push(Block {
            index: 0,
            data,
            last_used: self.clock,
        });
        self.slots.insert(0, 0);
    }

    pub fn stats(&self) -> CacheStats {
        self.stats
    }

    /// Copies bytes from `offset` into `buf`; returns how many were available (less than
    /// `buf.len()` only at the end of the source).
    pub fn read(&mut self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        self.stats.reads += 1;
        let bs = self.config.block_bytes as u64;
        let mut done = 0usize;
        while done < buf.len() {
            let pos = offset + done as u64;
            if pos >= self.size {
                break;
            }
            let slot = self.block(pos / bs)?;
            let data = &self.blocks[slot].data;
            let within = (pos % bs) as usize;
            let n = (data.len() - within).min(buf.len() - done);
            buf[done..done + n].copy_from_slice(&data[within..within + n]);
            done += n;
        }
        Ok(done)
    }

    /// The bytes of block `index` (the last one may be shorter than the others).
    fn len_of(&self, index: u64) -> usize {
        let bs = self.config.block_bytes as u64;
        (self.size - index * bs).min(bs) as usize
    }

    /// Index in `blocks` of block `index`, loading it (and evicting the least recently used)
    /// when absent.
    fn block(&mut self, index: u64) -> io::Result<usize> {
        self.clock += 1;
        if let Some(&i) = self.slots.get(&index) {
            self.blocks[i].last_used = self.clock;
            return Ok(i);
        }
        let start = index * self.config.block_bytes as u64;
        let len = self.len_of(index);
        let slot = if self.blocks.len() < self.config.blocks {
            self.blocks.push(Block {
                index,
                data: Vec::new(),
                last_used: 0,
            });
            self.blocks.len() - 1
        } else {
            self.blocks
                .iter()
                .enumerate()
                .min_by_key(|(_, b)| b.last_used)
                .map(|(i, _)| i)
                .expect("capacity is at least one block")
        };
        let b = &mut self.blocks[slot];
        // Forget the slot's block first: if the read fails, it must not serve stale bytes.
        self.slots.remove(&b.index);
        b.index = u64::MAX;
        b.data.resize(len, 0);
        self.src.read_exact_at(start, &mut b.data)?;
        b.index = index;
        self.slots.insert(index, slot);
        b.last_used = self.clock;
        self.stats.source_reads += 1;
        self.stats.source_bytes += len as u64;
        Ok(slot)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    fn bytes(n: usize) -> Vec<u8> {
        (0..n).map(|i| (i * 7 % 251) as u8).collect()
    }

    #[test]
    fn reads_across_blocks_and_stops_at_the_end() {
        let data = bytes(10_000);
        let mut c = BlockCache::new(
            Box::new(data.clone()),
            CacheConfig {
                block_bytes: 1024,
                blocks: 2,
            },
        );
        let mut buf = vec![0u8; 3000];
        assert_eq!(c.read(500, &mut buf).unwrap(), 3000);
        assert_eq!(buf, data[500..3500]);
        // Blocks 0..=3 were needed, 2 fit: 4 loads.
        assert_eq!(c.stats().source_reads, 4);
        // Short read at the end: 10_000 - 9_000 = 1000 bytes.
        assert_eq!(c.read(9_000, &mut buf).unwrap(), 1000);
        assert_eq!(buf[..1000], data[9_000..]);
        assert_eq!(c.read(10_000, &mut buf).unwrap(), 0);
    }

    #[test]
    fn keeps_recently_used_blocks() {
        let data = bytes(8192);
        let mut c = BlockCache::new(
            Box::new(data.clone()),
            CacheConfig {
                block_bytes: 1024,
                blocks: 2,
            },
        );
        let mut b = [0u8; 16];
        c.read(0, &mut b).unwrap(); // load 0
        c.read(1024, &mut b).unwrap(); // load 1
        c.read(10, &mut b).unwrap(); // hit 0
        c.read(2048, &mut b).unwrap(); // load 2, evicts 1 (least recent)
        c.read(20, &mut b).unwrap(); // hit 0
        assert_eq!(c.stats().source_reads, 3);
        c.read(1030, &mut b).unwrap(); // 1 was evicted: load again
        assert_eq!(c.stats().source_reads, 4);
        assert_eq!(b[..], data[1030..1046]);
        assert_eq!(c.stats().reads, 6);
    }

    /// A source that counts the reads made of it.
    struct Counted(Vec<u8>, Arc<AtomicUsize>);

    impl ReadAt for Counted {
        fn size(&self) -> u64 {
            self.0.size()
        }
        fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
            self.1.fetch_add(1, Ordering::Relaxed);
            self.0.read_exact_at(offset, buf)
        }
    }

    #[test]
    fn a_first_block_given_is_held_and_not_read_again() {
        let data = bytes(3000);
        let config = CacheConfig {
            block_bytes: 1024,
            blocks: 4,
        };
        let calls = Arc::new(AtomicUsize::new(0));
        let mut c = BlockCache::new(Box::new(Counted(data.clone(), calls.clone())), config);
        c.hold_first_block(data[..1024].to_vec());
        let mut b = [0u8; 100];
        c.read(10, &mut b).unwrap();
        assert_eq!(b[..], data[10..110]);
        assert_eq!(
            calls.load(Ordering::Relaxed),
            0,
            "block 0 came from what was given"
        );
        c.read(2990, &mut [0u8; 10]).unwrap();
        assert_eq!(calls.load(Ordering::Relaxed), 1);
        assert_eq!(
            (c.stats().source_reads, c.stats().source_bytes),
            (2, 1024 + 952)
        );
        // Bytes that are not the whole first block are not taken.
        let calls = Arc::new(AtomicUsize::new(0));
        let mut c = BlockCache::new(Box::new(Counted(data.clone(), calls.clone())), config);
        c.hold_first_block(data[..100].to_vec());
        c.read(0, &mut b).unwrap();
        assert_eq!(b[..], data[..100]);
        assert_eq!(calls.load(Ordering::Relaxed), 1);
    }

    #[test]
    fn files_that_fit_the_budget_are_held_whole() {
        const MIB: u64 = 1 << 20;
        let one = |sizes: &[u64]| {
            CacheConfig::for_files(sizes)
                .iter()
                .map(|c| (c.block_bytes as u64 / MIB, c.blocks))
                .collect::<Vec<_>>()
        };
        // Held whole in 32 MiB blocks: 100 MiB + 1 byte needs 4; an empty file still gets one.
        assert_eq!(one(&[100 * MIB + 1]), [(32, 4)]);
        assert_eq!(one(&[0]), [(32, 1)]);
        assert_eq!(one(&[WHOLE_FILE_BUDGET]), [(32, 5)]);
        // Over the budget: 144 MiB in 8 MiB blocks.
        assert_eq!(one(&[WHOLE_FILE_BUDGET + 1]), [(8, 18)]);
        // Four files share the budget (40 MiB each to hold whole, 36 MiB of blocks else): the
        // small ones whole, the large one in 36 blocks of 1 MiB (three of 8 MiB would thrash).
        assert_eq!(
            one(&[10 * MIB, 40 * MIB, 41 * MIB, MIB]),
            [(32, 1), (32, 2), (1, 36), (32, 1)]
        );
        // Many ranks: at least 8 blocks each.
        assert_eq!(one(&[1 << 30; 64])[0], (1, 8));
    }

    #[test]
    fn a_whole_file_cache_loads_each_block_once_over_repeated_scans() {
        let data = bytes(64 * 1024);
        let config = CacheConfig {
            block_bytes: 1024,
            blocks: 64,
        };
        let mut c = BlockCache::new(Box::new(data.clone()), config);
        let mut page = [0u8; 512];
        for _scan in 0..5 {
            for off in (0..data.len()).step_by(512).rev() {
                c.read(off as u64, &mut page).unwrap();
                assert_eq!(page[..], data[off..off + 512]);
            }
        }
        assert_eq!(c.stats().source_reads, 64);
        assert_eq!(c.stats().reads, 5 * 128);
    }

    #[test]
    fn a_failed_load_serves_no_stale_bytes() {
        use std::sync::atomic::{AtomicBool, Ordering};
        use std::sync::Arc;
        struct Flaky(Vec<u8>, Arc<AtomicBool>);
        impl ReadAt for Flaky {
            fn size(&self) -> u64 {
                self.0.len() as u64
            }
            fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
                if self.1.load(Ordering::Relaxed) {
                    return Err(io::Error::other("gone"));
                }
                let o = offset as usize;
                buf.copy_from_slice(&self.0[o..o + buf.len()]);
                Ok(())
            }
        }
        let data = bytes(4096);
        let failing = Arc::new(AtomicBool::new(false));
        let config = CacheConfig {
            block_bytes: 1024,
            blocks: 1,
        };
        let mut c = BlockCache::new(Box::new(Flaky(data.clone(), failing.clone())), config);
        let mut b = [0u8; 8];
        c.read(0, &mut b).unwrap();
        // Block 1 fails to load into block 0's slot: neither block may be served from it.
        failing.store(true, Ordering::Relaxed);
        assert!(c.read(1024, &mut b).is_err());
        assert!(c.read(0, &mut b).is_err());
        assert_eq!(c.stats().source_reads, 1);
        failing.store(false, Ordering::Relaxed);
        c.read(1030, &mut b).unwrap();
        assert_eq!(b[..], data[1030..1038]);
    }
}
