//! PostgreSQL's binary `COPY` format, for bulk loading COMB-keyed rows through sqlx's
//! `PgConnection::copy_in_raw`: the fastest way into PostgreSQL, and with COMB keys every
//! row lands at the right edge of the primary key's index.
//!
//! sqlx sends `COPY` data as raw bytes; [`PgBinaryCopy`] writes them: the `PGCOPY` header,
//! one tuple per [`push`](PgBinaryCopy::push), and the trailer, in the layout of
//! PostgreSQL's manual ("COPY", "Binary Format"). (tokio-postgres users have
//! `BinaryCopyInWriter`, which takes `combkey_postgres::Comb` directly.)
//!
//! ```no_run
//! # async fn f(conn: &mut sqlx::PgConnection) -> Result<(), Box<dyn std::error::Error>> {
//! use combkey_sqlx::Comb;
//! use combkey_sqlx::copy::{Field, PgBinaryCopy};
//!
//! let mut data = PgBinaryCopy::new(2);
//! for n in 0..100_000 {
//!     data.push(&[Field::Comb(Comb::new()), Field::Text(&format!("row {n}"))])?;
//! }
//! let mut copy = conn.copy_in_raw("COPY orders (id, note) FROM STDIN (FORMAT binary)").await?;
//! copy.send(data.finish()).await?;
//! let rows = copy.finish().await?;
//! assert_eq!(rows, 100_000);
//! # Ok(()) }
//! ```

use std::fmt;

use crate::Comb;

/// The 11-byte signature every binary `COPY` stream starts with.
const SIGNATURE: &[u8; 11] = b"PGCOPY\n\xff\r\n\0";

/// One field of a tuple, in the binary format of the column's type.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum Field<'a> {
    /// A `uuid` column: the 16 public bytes.
    Comb(Comb),
    /// A `text` or `varchar` column.
    Text(&'a str),
    /// A `bytea` column.
    Bytes(&'a [u8]),
    /// An `int8` (`bigint`) column.
    Int8(i64),
    /// An `int4` (`integer`) column.
    Int4(i32),
    /// An `int2` (`smallint`) column.
    Int2(i16),
    /// A `bool` column.
    Bool(bool),
    /// `NULL`, in any column.
    Null,
}

/// Why a tuple was not written.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CopyError {
    /// The tuple has another number of fields than the columns the copy was made for.
    FieldCount {
        /// Columns of the copy.
        expected: usize,
        /// Fields given.
        found: usize,
    },
    /// A text or bytea field longer than a field may be (2 GiB - 1).
    FieldTooLong {
        /// Its length in bytes.
        len: usize,
    },
}

impl fmt::Display for CopyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CopyError::FieldCount { expected, found } => {
                write!(f, "a COPY tuple needs {expected} fields, one per column; found {found}")
            }
            CopyError::FieldTooLong { len } => write!(f, "a COPY field holds at most 2 GiB - 1 bytes; found {len}"),
        }
    }
}

impl std::error::Error for CopyError {}

/// The data of a `COPY ... FROM STDIN (FORMAT binary)`, built tuple by tuple. Send it
/// whole with [`finish`](Self::finish), or in pieces with [`take`](Self::take) to keep
/// memory flat.
#[derive(Clone, Debug)]
pub struct PgBinaryCopy {
    buf: Vec<u8>,
    columns: usize,
    rows: u64,
}

impl PgBinaryCopy {
    /// A copy of tuples of `columns` fields (the columns named in the `COPY` statement).
    pub fn new(columns: u16) -> Self {
        let mut buf = Vec::with_capacity(64 * 1024);
        buf.extend_from_slice(SIGNATURE);
        buf.extend_from_slice(&0i32.to_be_bytes()); // flags: no OIDs
        buf.extend_from_slice(&0i32.to_be_bytes()); // no header extension
        PgBinaryCopy { buf, columns: usize::from(columns), rows: 0 }
    }

    /// Appends one tuple. Nothing is written when it fails.
    pub fn push(&mut self, fields: &[Field<'_>]) -> Result<(), CopyError> {
        if fields.len() != self.columns {
            return Err(CopyError::FieldCount { expected: self.columns, found: fields.len() });
        }
        if let Some(len) = fields.iter().find_map(|f| match f {
            Field::Text(s) if i32::try_from(s.len()).is_err() => Some(s.len()),
            Field::Bytes(b) if i32::try_from(b.len()).is_err() => Some(b.len()),
            _ => None,
        }) {
            return Err(CopyError::FieldTooLong { len });
        }
        // The count fits: `columns` came from a u16.
        self.buf.extend_from_slice(&i16::try_from(self.columns).unwrap_or(i16::MAX).to_be_bytes());
        for field in fields {
            let mut put = |bytes: &[u8]| {
                // Lengths were checked above.
                self.buf.extend_from_slice(&i32::try_from(bytes.len()).unwrap_or(i32::MAX).to_be_bytes());
                self.buf.extend_from_slice(bytes);
            };
            match field {
                Field::Comb(id) => put(id.as_comb().as_bytes()),
                Field::Text(s) => put(s.as_bytes()),
                Field::Bytes(b) => put(b),
                Field::Int8(v) => put(&v.to_be_bytes()),
                Field::Int4(v) => put(&v.to_be_bytes()),
                Field::Int2(v) => put(&v.to_be_bytes()),
                Field::Bool(v) => put(&[u8::from(*v)]),
                Field::Null => self.buf.extend_from_slice(&(-1i32).to_be_bytes()),
            }
        }
        self.rows += 1;
        Ok(())
    }

    /// Tuples pushed so far.
    pub const fn rows(&self) -> u64 {
        self.rows
    }

    /// Bytes waiting to be sent.
    pub fn pending(&self) -> usize {
        self.buf.len()
    }

    /// The bytes written so far (the header first), leaving the copy empty for more tuples:
    /// send them and go on.
    pub fn take(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.buf)
    }

    /// The remaining bytes with the trailer that ends the data.
    pub fn finish(mut self) -> Vec<u8> {
        self.buf.extend_from_slice(&(-1i16).to_be_bytes());
        self.buf
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_of_the_manual() {
        let id: Comb = "017f22e2-79b0-7cc3-98c4-dc0c0c07398f".parse().unwrap();
        let mut c = PgBinaryCopy::new(3);
        c.push(&[Field::Comb(id), Field::Text("ab"), Field::Null]).unwrap();
        let bytes = c.finish();
        let mut expected = b"PGCOPY\n\xff\r\n\0".to_vec();
        expected.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 0]); // flags, extension length
        expected.extend_from_slice(&[0, 3]); // field count
        expected.extend_from_slice(&[0, 0, 0, 16]);
        expected.extend_from_slice(&[
            0x01, 0x7f, 0x22, 0xe2, 0x79, 0xb0, 0x7c, 0xc3, 0x98, 0xc4, 0xdc, 0x0c, 0x0c, 0x07, 0x39, 0x8f,
        ]);
        expected.extend_from_slice(&[0, 0, 0, 2, b'a', b'b']);
        expected.extend_from_slice(&[0xff, 0xff, 0xff, 0xff]); // NULL
        expected.extend_from_slice(&[0xff, 0xff]); // trailer
        assert_eq!(bytes, expected);
    }

    #[test]
    fn a_wrong_field_count_writes_nothing() {
        let mut c = PgBinaryCopy::new(2);
        let before = c.pending();
        let err = c.push(&[Field::Int8(1)]).unwrap_err();
        assert_eq!(err, CopyError::FieldCount { expected: 2, found: 1 });
        assert!(err.to_string().contains("needs 2 fields"));
        assert_eq!((c.pending(), c.rows()), (before, 0));
    }
}
