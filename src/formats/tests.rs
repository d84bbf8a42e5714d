use super::*;

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/corpus");

#[test]
#[ignore]
fn dump_corpus_stats() {
    let mut files = Vec::new();
    for dir in std::fs::read_dir(CORPUS).unwrap() {
        let dir = dir.unwrap().path();
        if dir.is_dir() {
            for f in std::fs::read_dir(&dir).unwrap() {
                files.push(f.unwrap().path());
            }
        }
    }
    files.sort();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        let t = std::time::Instant::now();
        let imp = import_transcript(&text, None).unwrap();
        let open = imp.messages.iter().flat_map(|m| &m.parts).filter(|p| matches!(p, crate::model::Part::Tool(t) if matches!(t.state, crate::model::ToolState::Pending{..}))).count();
        println!("{:60} {:14} msgs {:5} {:?} open {} warn {} {:?} {:?}", f.file_name().unwrap().to_string_lossy(), imp.format.as_str(), imp.messages.len(), imp.stats, open, imp.warnings.len(), imp.warnings.iter().take(3).collect::<Vec<_>>(), t.elapsed());
    }
}
