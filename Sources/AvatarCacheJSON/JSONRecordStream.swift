import Foundation

/// Splits a JSON export into its records without holding the file in memory.
///
/// Three shapes are recognised from the first bytes:
/// - a top-level array `[ {...}, {...} ]`: each element is a record;
/// - an object holding the records in an array under `recordsKey` (`{"users": [...]}`):
///   each element of that array is a record, other keys are skipped;
/// - with `membersAreRecords`, an object holding the records in an object under `recordsKey`, keyed by id
///   (`{"users": {"u1": {...}}}`, as Realtime Database exports and many dump scripts
///   write them): each member's value is a record, its key the record's `key`;
/// - NDJSON: one object per line; when the first object closes without holding
///   `recordsKey`, the file is read line by line from there on, so a broken line costs
///   that line only.
///
/// The file is read by `JSONReader` (a piece at a time); a record is cut out by its
/// strings and brackets alone (`JSONReader.cutValue`), then decoded on its own, so a bad
/// record is reported and the rest go on.
package struct JSONRecordStream: Sequence, IteratorProtocol {
    package struct Record {
        /// 1-based position of the record in the export.
        package var index: Int
        /// 1-based line on which the record starts.
        package var line: Int
        /// The record's JSON bytes, or why they could not be cut out.
        package var bytes: Result<[UInt8], RecordError>
        /// Its key, when the records are an object's members.
        package var key: String?
    }

    package struct RecordError: Error, CustomStringConvertible {
        package var description: String
    }

    private enum Mode { case detect, array, members, lines, done }

    private var reader: JSONReader
    private let recordsKey: String
    private let maxRecordBytes: Int
    private let membersAreRecords: Bool
    private var mode: Mode = .detect
    private var index = 0

    /// `pieceSize`: the bytes read from the file at a time (256 KiB: it is read once,
    /// front to back; the tests make it small, to put records across pieces).
    package init(path: String, recordsKey: String, maxRecordBytes: Int = 16 << 20, membersAreRecords: Bool = false,
                 pieceSize: Int = 256 << 10) throws {
        guard let reader = JSONReader(path: path, pieceSize: pieceSize, countsLines: true) else {
            throw CocoaError(.fileReadNoSuchFile, userInfo: [NSFilePathErrorKey: path])
        }
        self.reader = reader
        self.recordsKey = recordsKey
        self.maxRecordBytes = maxRecordBytes
        self.membersAreRecords = membersAreRecords
    }

    package mutating func next() -> Record? {
        do {
            return try nextRecord()
        } catch {
            // The file could not be read on (an I/O error): the stream ends with it.
            mode = .done
            index += 1
            return Record(index: index, line: reader.line(), bytes: .failure(RecordError(description: "cannot read on: \(error)")))
        }
    }

    private mutating func nextRecord() throws -> Record? {
        while true {
            switch mode {
            case .done:
                return nil
            case .detect:
                try reader.skipByteOrderMark()
                while let byte = try reader.peekRaw(), JSONReader.isWhitespace(byte) { try reader.advance() }
                guard let first = try reader.peekRaw() else { mode = .done; return nil }
                if first == UInt8(ascii: "[") {
                    try reader.advance()
                    mode = .array
                } else if first == UInt8(ascii: "{") {
                    if let record = try detectObjectShape() { return record }
                } else {
                    mode = .done
                    index += 1
                    return Record(index: index, line: reader.line(), bytes: .failure(RecordError(description: "the export does not start with [ or {: found \(JSONReader.describe(first, quote: "\""))")))
                }
            case .array:
                if let record = try nextElement() { return record }
            case .members:
                if let record = try nextMember() { return record }
            case .lines:
                if let record = try nextLine() { return record }
            }
        }
    }

    /// Reads the first object. If it holds `recordsKey: [`, switches to array mode (its
    /// contents so far are dropped); otherwise returns it as the first NDJSON record and
    /// switches to line mode.
    private mutating func detectObjectShape() throws -> Record? {
        let startLine = reader.line()
        switch try reader.head(recordsKey: Array(recordsKey.utf8), members: membersAreRecords, limit: maxRecordBytes) {
        case .records(let opening):
            mode = opening == UInt8(ascii: "[") ? .array : .members
            return nil
        case .object(let bytes):
            mode = .lines
            index += 1
            return Record(index: index, line: startLine, bytes: .success(bytes))
        case .tooLarge:
            mode = .done
            index += 1
            return Record(index: index, line: startLine, bytes: .failure(RecordError(description: "the first object is larger than \(maxRecordBytes) bytes and holds no \"\(recordsKey)\" array")))
        case .truncated:
            mode = .done
            index += 1
            return Record(index: index, line: startLine, bytes: .failure(RecordError(description: "the export ends inside its first object (truncated?)")))
        }
    }

    /// The next member of the object of records: its key, then its value as a record.
    private mutating func nextMember() throws -> Record? {
        try reader.skipSeparators()
        guard let first = try reader.peekRaw() else {
            mode = .done
            index += 1
            return Record(index: index, line: reader.line(), bytes: .failure(RecordError(description: "the export ends before its closing } (truncated?)")))
        }
        if first == UInt8(ascii: "}") {
            try reader.advance()
            mode = .done
            return nil
        }
        guard first == UInt8(ascii: "\"") else {
            mode = .done
            index += 1
            return Record(index: index, line: reader.line(), bytes: .failure(RecordError(description: "expected a key in the object of records, found \(JSONReader.describe(first, quote: "\""))")))
        }
        try reader.advance()
        let keyBytes = try reader.rawString(limit: 4096)
        let quoted = [UInt8(ascii: "\"")] + keyBytes + [UInt8(ascii: "\"")]
        let key = quoted.withUnsafeBytes { bytes -> String? in
            var keyReader = JSONReader(bytes: bytes)
            guard let key = try? keyReader.stringValue(), (try? keyReader.expectEnd()) != nil else { return nil }
            return key
        } ?? String(decoding: keyBytes, as: UTF8.self)
        try reader.skipColons()
        var record = try nextElement(closing: UInt8(ascii: "}"))
        record?.key = key
        return record
    }

    /// The next element of the array of records, up to `closing` (the array's `]`, or the
    /// `}` of an object of records).
    private mutating func nextElement(closing: UInt8 = UInt8(ascii: "]")) throws -> Record? {
        try reader.skipSeparators()
        guard let first = try reader.peekRaw() else {
            mode = .done
            index += 1
            return Record(index: index, line: reader.line(), bytes: .failure(RecordError(description: "the export ends before its closing ] (truncated?)")))
        }
        if first == closing {
            try reader.advance()
            // Anything after the array (the rest of a wrapper object) is ignored.
            mode = .done
            return nil
        }
        index += 1
        let startLine = reader.line()
        switch try reader.cutValue(closing: closing, limit: maxRecordBytes) {
        case .value(let bytes):
            return Record(index: index, line: startLine, bytes: .success(bytes))
        case .tooLarge:
            return tooLarge(line: startLine)
        case .truncated:
            mode = .done
            return Record(index: index, line: startLine, bytes: .failure(RecordError(description: "the export ends inside this record (truncated?)")))
        }
    }

    private mutating func nextLine() throws -> Record? {
        var over = false
        while true {
            let line = reader.line()
            guard let (bytes, ended) = try reader.cutLine(limit: maxRecordBytes, over: &over) else {
                mode = .done
                return nil
            }
            if bytes.allSatisfy(JSONReader.isWhitespace) && !over {
                if ended { continue }
                mode = .done
                return nil
            }
            if !ended { mode = .done }
            index += 1
            if over { return tooLarge(line: line) }
            return Record(index: index, line: line, bytes: .success(bytes))
        }
    }

    private func tooLarge(line: Int) -> Record {
        Record(index: index, line: line, bytes: .failure(RecordError(description: "record is larger than \(maxRecordBytes) bytes")))
    }

    /// JSON's white space (a byte before the first value, as the formats' detection looks).
    package static func isWhitespace(_ byte: UInt8) -> Bool { JSONReader.isWhitespace(byte) }
}
