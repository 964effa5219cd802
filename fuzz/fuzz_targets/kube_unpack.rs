//! `headroom kube unpack`'s reading of a pod log (src/fleet/kube/pack.rs): any bytes as a
//! log. Finding the blocks keeps memory bounded (an endless line, a block that announces
//! or holds too much), and a block that decodes unpacks only plain files and folders inside
//! its worker's directory, never over one already written.
#![no_main]

use headroom::fleet::kube::pack;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(blocks) = pack::find_blocks(data) else {
        return;
    };
    let root = tempfile::tempdir().expect("a temporary directory");
    let out = root.path().join("out");
    for block in &blocks {
        assert!(block.header.encoded_bytes <= pack::MAX_BLOCK_BYTES);
        let dir = pack::worker_dir(&out, block.header.worker);
        if pack::unpack(block, &dir).is_ok() {
            // Unpacking the same block again is refused: the directory holds files now,
            // unless the archive held none.
            let again = pack::unpack(block, &dir);
            let empty = std::fs::read_dir(&dir).map(|mut d| d.next().is_none()).unwrap_or(true);
            assert!(again.is_err() || empty);
        }
    }
    // Nothing lands beside `out`.
    let beside: Vec<_> = std::fs::read_dir(root.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n != "out")
        .collect();
    assert!(beside.is_empty(), "{beside:?}");
});
