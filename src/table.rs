//! The columns of a CSV file, for the command line (`probeval._io`).
//!
//! Python's `csv` module builds a list of strings per row before anything is converted: a
//! 5-million-row file took 16 s and 1.6 GB that way, against 1 s and 0.5 GB for pandas. Here the
//! file is streamed once with the `csv` crate, only the columns asked for are kept, and each is
//! converted as it is read: integers while every cell is one, then floats, then text (each
//! distinct string stored once, the rows as codes). Memory is the used columns' size.
//!
//! Nothing here decides what is an error for the user's purpose: a column reports where its
//! first missing cell is (empty, or a marker such as `NA`) and where its first cell that is not
//! a number is, and the Python side says what that means for the option that uses the column.

use crate::{Error, Result, parallel};
use std::collections::HashMap;
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;

/// Cells that stand for a missing value (compared after trimming spaces), as pandas reads them.
pub const MISSING_MARKERS: [&str; 12] = [
    "", "NA", "N/A", "n/a", "NaN", "nan", "NAN", "null", "NULL", "None", "#N/A", "<NA>",
];

/// A missing-value marker, or any spelling of NaN that a number parser would accept.
fn is_missing(cell: &str) -> bool {
    MISSING_MARKERS.contains(&cell) || cell.parse::<f64>().is_ok_and(f64::is_nan)
}

/// How many records pass between two interruption checkpoints (a few milliseconds of parsing).
const CHECK_EVERY: usize = 1 << 16;

/// A column's values, in the narrowest type that holds every cell.
#[derive(Debug, Clone, PartialEq)]
pub enum Values {
    /// Every cell is an integer (and none is missing).
    Int(Vec<i64>),
    /// Every cell is a number; missing cells are NaN.
    Float(Vec<f64>),
    /// Some cell is not a number: `levels[codes[row]]`, or missing when `codes[row]` equals
    /// `levels.len()`.
    Text {
        codes: Vec<u32>,
        levels: Vec<String>,
    },
}

/// A cell worth reporting: its data row (1-based, the header not counted) and its text.
pub type Cell = (usize, String);

/// One column read from the file.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    pub values: Values,
    /// The first missing cell, if any.
    pub first_missing: Option<Cell>,
    /// The first cell that is neither a number nor missing, if any.
    pub first_text: Option<Cell>,
}

/// The column while it is being read: its type can only widen (int → float → text).
struct Builder {
    values: Values,
    levels: HashMap<String, u32>,
    first_missing: Option<Cell>,
    first_text: Option<Cell>,
    /// Rows read as numbers before the first text cell: their text is filled in by a
    /// second pass over the file (the numbers alone do not give back "007" or "1e3").
    rescan: usize,
}

const MISSING_CODE: u32 = u32::MAX;

impl Builder {
    fn new() -> Self {
        Builder {
            values: Values::Int(Vec::new()),
            levels: HashMap::new(),
            first_missing: None,
            first_text: None,
            rescan: 0,
        }
    }

    fn code(&mut self, cell: &str) -> Result<u32> {
        if let Some(&code) = self.levels.get(cell) {
            return Ok(code);
        }
        let code = u32::try_from(self.levels.len())
            .ok()
            .filter(|&c| c < MISSING_CODE)
            .ok_or_else(|| Error::invalid("a text column has more than 4 billion values"))?;
        self.levels.insert(cell.to_owned(), code);
        Ok(code)
    }

    fn push(&mut self, row: usize, cell: &str) -> Result<()> {
        // The common case first: a number where numbers are expected costs one parse.
        match &mut self.values {
            Values::Int(ints) => {
                if let Ok(value) = cell.parse::<i64>() {
                    ints.push(value);
                    return Ok(());
                }
            }
            Values::Float(floats) => match cell.parse::<f64>() {
                Ok(value) if !value.is_nan() => {
                    floats.push(value);
                    return Ok(());
                }
                _ => {}
            },
            Values::Text { .. } => {}
        }
        if is_missing(cell) {
            self.first_missing
                .get_or_insert_with(|| (row + 1, cell.to_owned()));
            match &mut self.values {
                Values::Int(ints) => {
                    let mut floats: Vec<f64> = ints.iter().map(|&i| i as f64).collect();
                    floats.push(f64::NAN);
                    self.values = Values::Float(floats);
                }
                Values::Float(floats) => floats.push(f64::NAN),
                Values::Text { codes, .. } => codes.push(MISSING_CODE),
            }
            return Ok(());
        }
        match &self.values {
            Values::Int(ints) => {
                if let Ok(value) = cell.parse::<f64>() {
                    let mut floats: Vec<f64> = ints.iter().map(|&i| i as f64).collect();
                    floats.push(value);
                    self.values = Values::Float(floats);
                    return Ok(());
                }
            }
            Values::Float(_) => {}
            Values::Text { .. } => {
                let code = self.code(cell)?;
                if let Values::Text { codes, .. } = &mut self.values {
                    codes.push(code);
                }
                return Ok(());
            }
        }
        // The first cell that is not a number: the column becomes text from here on.
        self.first_text = Some((row + 1, cell.to_owned()));
        let mut codes = match &self.values {
            // Missing numbers stay missing; the others are filled in by the second pass.
            Values::Float(floats) => floats
                .iter()
                .map(|v| if v.is_nan() { MISSING_CODE } else { 0 })
                .collect(),
            _ => vec![0; row],
        };
        self.rescan = row;
        codes.push(self.code(cell)?);
        self.values = Values::Text {
            codes,
            levels: Vec::new(),
        };
        Ok(())
    }

    fn finish(mut self) -> Column {
        if let Values::Text { codes, levels } = &mut self.values {
            let mut ordered = vec![String::new(); self.levels.len()];
            for (text, code) in self.levels.drain() {
                ordered[code as usize] = text;
            }
            let missing = u32::try_from(ordered.len()).unwrap_or(MISSING_CODE);
            for code in codes.iter_mut().filter(|c| **c == MISSING_CODE) {
                *code = missing;
            }
            *levels = ordered;
        }
        Column {
            values: self.values,
            first_missing: self.first_missing,
            first_text: self.first_text,
        }
    }
}

fn reader<R: Read>(source: R, delimiter: u8) -> csv::Reader<R> {
    csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true) // field counts are checked below, with a clearer message
        .delimiter(delimiter)
        .from_reader(source)
}

fn open(path: &Path) -> Result<BufReader<File>> {
    File::open(path)
        .map(|file| BufReader::with_capacity(1 << 20, file))
        .map_err(|error| Error::invalid(format!("cannot open {}: {error}", path.display())))
}

fn read_error(error: csv::Error) -> Error {
    match error.kind() {
        csv::ErrorKind::Io(io) => Error::invalid(format!("cannot read the file: {io}")),
        _ => Error::invalid(format!("not a readable CSV file: {error}")),
    }
}

fn text(field: &[u8], line: u64) -> Result<&str> {
    std::str::from_utf8(field).map_err(|_| Error::invalid(format!("line {line} is not UTF-8 text")))
}

/// A line with nothing on it but spaces (the csv crate already skips empty lines).
fn blank(record: &csv::ByteRecord) -> bool {
    record.len() == 1 && record[0].iter().all(u8::is_ascii_whitespace)
}

/// The header: the first non-blank record, as UTF-8 (a byte-order mark is dropped).
pub fn read_header<R: Read>(source: R, delimiter: u8) -> Result<Option<Vec<String>>> {
    let mut csv = reader(source, delimiter);
    let mut record = csv::ByteRecord::new();
    while csv.read_byte_record(&mut record).map_err(read_error)? {
        if blank(&record) {
            continue;
        }
        let line = record.position().map_or(1, |p| p.line());
        return record
            .iter()
            .map(|field| text(field, line).map(str::to_owned))
            .collect::<Result<Vec<_>>>()
            .map(Some);
    }
    Ok(None)
}

/// Calls `visit(data row, record)` for every data record after the header, checking that it
/// has as many fields as the header (extra fields must be empty: a trailing delimiter).
fn for_each_row<R: Read>(
    source: R,
    delimiter: u8,
    mut visit: impl FnMut(usize, &csv::ByteRecord, u64) -> Result<bool>,
) -> Result<()> {
    let mut csv = reader(source, delimiter);
    let mut record = csv::ByteRecord::new();
    let mut width = None;
    let mut row = 0;
    while csv.read_byte_record(&mut record).map_err(read_error)? {
        if blank(&record) {
            continue;
        }
        let line = record.position().map_or(0, |p| p.line());
        let Some(width) = width else {
            width = Some(record.len());
            continue;
        };
        if record.len() < width
            || (record.len() > width && record.iter().skip(width).any(|f| !f.is_empty()))
        {
            return Err(Error::invalid(format!(
                "line {line}: {} fields where the header has {width}",
                record.len()
            )));
        }
        if row % CHECK_EVERY == 0 {
            parallel::checkpoint()?;
        }
        if !visit(row, &record, line)? {
            break;
        }
        row += 1;
    }
    Ok(())
}

/// Rows handed at a time from the thread that parses the CSV to the one that converts cells.
const BATCH_ROWS: usize = 1 << 14;

/// The used cells of [`BATCH_ROWS`] consecutive rows: row r's cell j ends at
/// `ends[r * width + j]` in `bytes` (and starts where the previous cell ends).
struct Batch {
    first_row: usize,
    lines: Vec<u64>,
    bytes: Vec<u8>,
    ends: Vec<usize>,
}

impl Batch {
    fn new(first_row: usize) -> Self {
        Batch {
            first_row,
            lines: Vec::with_capacity(BATCH_ROWS),
            bytes: Vec::new(),
            ends: Vec::new(),
        }
    }
}

/// Read every row once into the builders. Parsing the CSV and converting its cells each take
/// about half the time, so a second thread parses while this one converts (rows stay in file
/// order: one producer, one consumer, a bounded queue of batches). An error on either side
/// stops both: the consumer returns it, and dropping its end of the queue ends the producer.
fn first_pass<R: Read + Send>(
    source: R,
    delimiter: u8,
    indices: &[usize],
    builders: &mut [Builder],
) -> Result<()> {
    let (sender, receiver) = std::sync::mpsc::sync_channel::<Result<Batch>>(4);
    std::thread::scope(|scope| {
        scope.spawn(move || {
            let mut batch = Batch::new(0);
            let parsed = for_each_row(source, delimiter, |row, record, line| {
                for &index in indices {
                    let field = record.get(index).ok_or_else(|| {
                        Error::invalid(format!("column {index} is past the end of line {line}"))
                    })?;
                    batch.bytes.extend_from_slice(field.trim_ascii());
                    batch.ends.push(batch.bytes.len());
                }
                batch.lines.push(line);
                if batch.lines.len() < BATCH_ROWS {
                    return Ok(true);
                }
                let full = std::mem::replace(&mut batch, Batch::new(row + 1));
                Ok(sender.send(Ok(full)).is_ok()) // false: the consumer has stopped
            });
            // The last rows, or what went wrong (nobody may be listening any more).
            let _ = sender.send(parsed.map(|()| batch));
        });
        let width = indices.len();
        for message in receiver {
            let batch = message?;
            parallel::checkpoint()?;
            let mut start = 0;
            for (r, &line) in batch.lines.iter().enumerate() {
                for (j, builder) in builders.iter_mut().enumerate() {
                    let end = batch.ends[r * width + j];
                    builder.push(batch.first_row + r, text(&batch.bytes[start..end], line)?)?;
                    start = end;
                }
            }
        }
        Ok(())
    })
}

/// The columns at `indices` (positions in the header) of a CSV stream; `reopen` gives the
/// stream again for the rare second pass (a column whose first text cell comes after numbers).
pub fn read_columns<R: Read + Send>(
    mut reopen: impl FnMut() -> Result<R>,
    delimiter: u8,
    indices: &[usize],
) -> Result<Vec<Column>> {
    let mut builders: Vec<Builder> = indices.iter().map(|_| Builder::new()).collect();
    first_pass(reopen()?, delimiter, indices, &mut builders)?;
    let rescan: Vec<usize> = (0..builders.len())
        .filter(|&b| builders[b].rescan > 0)
        .collect();
    let until = rescan
        .iter()
        .map(|&b| builders[b].rescan)
        .max()
        .unwrap_or(0);
    if until > 0 {
        for_each_row(reopen()?, delimiter, |row, record, line| {
            for &b in &rescan {
                let builder = &mut builders[b];
                if row >= builder.rescan {
                    continue;
                }
                let field = record.get(indices[b]).unwrap_or_default();
                let cell = text(field.trim_ascii(), line)?;
                let code = if is_missing(cell) {
                    MISSING_CODE
                } else {
                    builder.code(cell)?
                };
                if let Values::Text { codes, .. } = &mut builder.values {
                    codes[row] = code;
                }
            }
            Ok(row + 1 < until)
        })?;
    }
    Ok(builders.into_iter().map(Builder::finish).collect())
}

/// [`read_header`] of a file.
pub fn read_file_header(path: &Path, delimiter: u8) -> Result<Option<Vec<String>>> {
    read_header(open(path)?, delimiter)
}

/// [`read_columns`] of a file.
pub fn read_file_columns(path: &Path, delimiter: u8, indices: &[usize]) -> Result<Vec<Column>> {
    read_columns(|| open(path), delimiter, indices)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn columns(data: &str, indices: &[usize]) -> Vec<Column> {
        read_columns(|| Ok(data.as_bytes()), b',', indices).unwrap()
    }

    #[test]
    fn types_widen_from_int_to_float_to_text() {
        let data = "a,b,c,d\n1,1,1,x\n2,2.5,007,y\n3,3,z,x\n";
        let got = columns(data, &[0, 1, 2, 3]);
        assert_eq!(got[0].values, Values::Int(vec![1, 2, 3]));
        assert_eq!(got[1].values, Values::Float(vec![1.0, 2.5, 3.0]));
        // The rows before the first text cell keep their own text ("007", not "7").
        let Values::Text { codes, levels } = &got[2].values else {
            panic!("text expected")
        };
        let shown: Vec<&str> = codes.iter().map(|&c| levels[c as usize].as_str()).collect();
        assert_eq!(shown, ["1", "007", "z"]);
        assert_eq!(got[2].first_text, Some((3, "z".to_owned())));
        let Values::Text { codes, levels } = &got[3].values else {
            panic!("text expected")
        };
        assert_eq!(levels.len(), 2);
        assert_eq!(codes[0], codes[2]);
        assert_eq!(got[3].first_text, Some((1, "x".to_owned())));
    }

    #[test]
    fn missing_cells_are_reported_and_kept_missing() {
        let data = "a,b,c\n1,x,0.5\n,NA,\n3,y,0.7\n";
        let got = columns(data, &[0, 1, 2]);
        let Values::Float(a) = &got[0].values else {
            panic!("float expected")
        };
        assert!(a[0] == 1.0 && a[1].is_nan() && a[2] == 3.0);
        assert_eq!(got[0].first_missing, Some((2, String::new())));
        let Values::Text { codes, levels } = &got[1].values else {
            panic!("text expected")
        };
        assert_eq!(codes[1] as usize, levels.len());
        assert_eq!(got[1].first_missing, Some((2, "NA".to_owned())));
        assert_eq!(got[2].first_text, None);
    }

    #[test]
    fn trailing_delimiters_and_blank_lines_are_accepted_short_lines_are_not() {
        let got = columns("a,b,\n1,2,\n\n  \n3,4,\n", &[1]);
        assert_eq!(got[0].values, Values::Int(vec![2, 4]));
        let got = columns("a,b\n1,2,\n3,4,\n", &[0]);
        assert_eq!(got[0].values, Values::Int(vec![1, 3]));
        let error = read_columns(|| Ok("a,b\n1,2\n3\n".as_bytes()), b',', &[0]).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("1 fields where the header has 2")
        );
        let error = read_columns(|| Ok("a,b\n1,2,5\n".as_bytes()), b',', &[0]).unwrap_err();
        assert!(error.to_string().contains("3 fields"));
    }

    #[test]
    fn many_batches_keep_rows_in_order_and_errors_stop_the_reader() {
        let n = 3 * BATCH_ROWS + 17;
        let mut data = String::from("i,x\n");
        for i in 0..n {
            // Text appears late in column x: the rows before it are read a second time.
            let x = if i == n - 5 {
                "late".to_owned()
            } else {
                format!("{i}.5")
            };
            data.push_str(&format!("{i},{x}\n"));
        }
        let got = columns(&data, &[0, 1]);
        assert_eq!(got[0].values, Values::Int((0..n as i64).collect()));
        let Values::Text { codes, levels } = &got[1].values else {
            panic!("text expected")
        };
        assert_eq!(levels[codes[0] as usize], "0.5");
        assert_eq!(levels[codes[n - 6] as usize], format!("{}.5", n - 6));
        assert_eq!(levels[codes[n - 5] as usize], "late");
        assert_eq!(got[1].first_text, Some((n - 4, "late".to_owned())));
        // A short line deep in the file, then a line that is not UTF-8.
        let cut = data[..data.len() / 2].rfind('\n').unwrap() + 1;
        let short = format!("{}7\n{}", &data[..cut], &data[cut..]);
        let Err(error) = read_columns(|| Ok(short.as_bytes()), b',', &[0]) else {
            panic!("a short line must be refused")
        };
        assert!(
            error
                .to_string()
                .contains("1 fields where the header has 2")
        );
        let mut bytes = data.clone().into_bytes();
        bytes.extend_from_slice(b"1,\xff\n");
        let Err(error) = read_columns(|| Ok(bytes.as_slice()), b',', &[1]) else {
            panic!("bytes that are not UTF-8 must be refused")
        };
        assert!(error.to_string().contains("is not UTF-8"), "{error}");
    }

    #[test]
    fn header_drops_the_byte_order_mark_and_refuses_other_encodings() {
        let header = read_header("\u{feff}x;y\n1;2\n".as_bytes(), b';').unwrap();
        assert_eq!(header, Some(vec!["x".to_owned(), "y".to_owned()]));
        assert_eq!(read_header("".as_bytes(), b',').unwrap(), None);
        let latin1: &[u8] = b"a,b\n1,\xe9\n";
        let error = read_columns(|| Ok(latin1), b',', &[1]).unwrap_err();
        assert!(error.to_string().contains("not UTF-8"));
    }
}
