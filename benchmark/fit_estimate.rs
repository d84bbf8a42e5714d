//! Fits the weights of `estimate_tokens` to o200k on the texts inside ../shared/corpus and prints
//! them with the fit's error. Run: `cargo run --release --example fit_estimate --no-default-features --features tools`.

use contextfold::tokens::{count_tokens, estimate_tokens, Encoding, Features};
use serde_json::Value;

fn strings(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) if s.len() >= 16 && s.contains(' ') || s_is_cjk(v) => {
            out.push(v.as_str().unwrap().to_string())
        }
        Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
        Value::Object(o) => o.values().for_each(|x| strings(x, out)),
        _ => {}
    }
}

fn s_is_cjk(v: &Value) -> bool {
    v.as_str().is_some_and(|s| s.len() >= 16 && s.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c)))
}

fn features(f: &Features) -> [f64; 8] {
    [f.letters, f.words, f.digits, f.spaces, f.newlines, f.punct, f.cjk, f.other].map(|x| x as f64)
}

fn solve(mut a: Vec<Vec<f64>>, mut b: Vec<f64>) -> Vec<f64> {
    let n = b.len();
    for c in 0..n {
        let p = (c..n).max_by(|&i, &j| a[i][c].abs().total_cmp(&a[j][c].abs())).unwrap();
        a.swap(c, p);
        b.swap(c, p);
        let pivot = a[c].clone();
        for r in c + 1..n {
            let k = a[r][c] / pivot[c];
            for (x, p) in a[r].iter_mut().zip(&pivot).skip(c) {
                *x -= k * p;
            }
            b[r] -= k * b[c];
        }
    }
    let mut w = vec![0.0; n];
    for c in (0..n).rev() {
        w[c] = (b[c] - (c + 1..n).map(|x| a[c][x] * w[x]).sum::<f64>()) / a[c][c];
    }
    w
}

fn main() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/corpus");
    let mut texts = Vec::new();
    for group in std::fs::read_dir(dir).expect("corpus beside the project").flatten() {
        if !group.path().is_dir() {
            continue;
        }
        for file in std::fs::read_dir(group.path()).unwrap().flatten() {
            let raw = String::from_utf8_lossy(&std::fs::read(file.path()).unwrap()).into_owned();
            let mut stream = serde_json::Deserializer::from_str(&raw).into_iter::<Value>();
            while let Some(Ok(v)) = stream.next() {
                strings(&v, &mut texts);
            }
        }
    }
    // Samples of ~4 KB, so each weighs about the same in the fit.
    let mut samples: Vec<String> = Vec::new();
    let mut cur = String::new();
    for t in texts {
        cur.push_str(&t);
        cur.push('\n');
        if cur.len() >= 4096 {
            samples.push(std::mem::take(&mut cur));
        }
    }
    let mut ata = vec![vec![0.0; 8]; 8];
    let mut atb = vec![0.0; 8];
    let mut rows = Vec::new();
    for s in &samples {
        let x = features(&Features::of(s));
        let y = count_tokens(s, Encoding::O200k) as f64;
        // Weighted by 1/y², so the fit minimizes the relative error of each sample.
        let k = 1.0 / (y * y).max(1.0);
        for i in 0..8 {
            atb[i] += k * x[i] * y;
            for j in 0..8 {
                ata[i][j] += k * x[i] * x[j];
            }
        }
        rows.push((x, y, s.len() as f64));
    }
    let w = solve(ata, atb);
    let names = ["LETTERS", "WORDS", "DIGITS", "SPACES", "NEWLINES", "PUNCT", "CJK", "OTHER"];
    for (n, v) in names.iter().zip(&w) {
        println!("const W_{n}: f64 = {v:.4};");
    }
    let (mut exact, mut fitted, mut current, mut quarter) = (0.0, 0.0, 0.0, 0.0);
    let mut errors = Vec::new();
    for ((x, y, chars), s) in rows.iter().zip(&samples) {
        let e: f64 = x.iter().zip(&w).map(|(a, b)| a * b).sum();
        exact += y;
        fitted += e;
        current += estimate_tokens(s) as f64;
        quarter += chars / 4.0;
        errors.push(((e - y).abs() / y, (chars / 4.0 - y).abs() / y));
    }
    let pct = |mut v: Vec<f64>, q: f64| {
        v.sort_by(f64::total_cmp);
        v[((v.len() - 1) as f64 * q) as usize] * 100.0
    };
    let fit: Vec<f64> = errors.iter().map(|e| e.0).collect();
    let quarter_err: Vec<f64> = errors.iter().map(|e| e.1).collect();
    println!(
        "per-sample error, median / p90 / max: fitted {:.1}% / {:.1}% / {:.0}%, chars/4 {:.1}% / {:.1}% / {:.0}%",
        pct(fit.clone(), 0.5),
        pct(fit.clone(), 0.9),
        pct(fit, 1.0),
        pct(quarter_err.clone(), 0.5),
        pct(quarter_err.clone(), 0.9),
        pct(quarter_err, 1.0)
    );
    println!(
        "{} samples, {:.1} MB: total error fitted {:+.1}%, current {:+.1}%, chars/4 {:+.1}%",
        samples.len(),
        samples.iter().map(|s| s.len()).sum::<usize>() as f64 / 1e6,
        (fitted / exact - 1.0) * 100.0,
        (current / exact - 1.0) * 100.0,
        (quarter / exact - 1.0) * 100.0
    );
}
