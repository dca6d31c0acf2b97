import AvatarCacheJSON
import AvatarCacheModel
import AvatarCacheSupport
import Foundation

/// Decodes each record of a JSON export (array, `{"<key>": [...]}` or NDJSON) on its
/// own, so one bad record is reported and the rest go on. Shared by the JSON readers.
struct JSONRecordDecoding<Record: Decodable> {
    let path: String
    let recordsKey: String
    let limits: ReaderLimits

    /// Makes a `BadRecord` for one record: `bad("why")`, or `bad("why", field: "key")`
    /// for the line of that field in the record.
    struct Locator {
        let path: String
        let index: Int
        let line: Int
        let bytes: [UInt8]

        /// The record, for the profiles read from it.
        var origin: RecordOrigin { RecordOrigin(file: path, index: index, line: line) }

        func callAsFunction(_ reason: String) -> BadRecord {
            BadRecord(file: path, index: index, line: line, reason: reason)
        }

        /// `field`: the key, or keys separated by "." (`participants.p2.displayName`),
        /// each looked for after the one before.
        func callAsFunction(_ reason: String, field: String) -> BadRecord {
            BadRecord(file: path, index: index, line: line(ofField: field), reason: reason)
        }

        /// The line of `"key":` (each key of a dotted path after the one before) in the
        /// record; its first line when not found.
        func line(ofField field: String) -> Int {
            var newlines = 0
            var index = 0
            for key in field.split(separator: ".") {
                let needle = Array("\"\(key)\"".utf8)
                var found = false
                while index + needle.count <= bytes.count {
                    if bytes[index] == 34, bytes[index..<(index + needle.count)].elementsEqual(needle) {
                        var after = index + needle.count
                        while after < bytes.count, [32, 9, 10, 13].contains(bytes[after]) { after += 1 }
                        if after < bytes.count, bytes[after] == 58 {
                            found = true
                            break
                        }
                    }
                    if bytes[index] == 10 { newlines += 1 }
                    index += 1
                }
                if !found { return line }
            }
            return line + newlines
        }
    }

    /// Calls `body` with each record or the reason it is bad; the second argument makes
    /// a `BadRecord` for that record (index and line) when the reader refuses it later.
    func forEach(_ body: (Result<Record, BadRecord>, Locator) throws -> Void) throws {
        try forEach(fast: nil, body)
    }

    /// `fast`: the record type's own reader, tried first (`FastJSONRecord`), JSONDecoder
    /// for what it gives up on; nil: JSONDecoder for every record.
    private func forEach(fast: ((inout JSONReader) throws -> Record?)?,
                         _ body: (Result<Record, BadRecord>, Locator) throws -> Void) throws {
        let stream: JSONRecordStream
        do {
            stream = try JSONRecordStream(path: path, recordsKey: recordsKey, maxRecordBytes: limits.maxRecordBytes)
        } catch {
            throw ExportError(file: path, reason: "cannot open: \(error.localizedDescription)")
        }
        let decoder = JSONDecoder()
        // One reader for every record's fast path: the buffers it grows are kept.
        var reader = JSONReader(bytes: UnsafeRawBufferPointer(start: nil, count: 0))
        for record in stream {
            var bad = Locator(path: path, index: record.index, line: record.line, bytes: [])
            switch record.bytes {
            case .failure(let error):
                if record.index == 1, error.isNotJSON {
                    throw ExportError(file: path, reason: error.description)
                }
                try body(.failure(bad(error.description)), bad)
            case .success(let bytes):
                bad = Locator(path: path, index: record.index, line: record.line, bytes: bytes)
                if let fast,
                   let record = bytes.withUnsafeBytes({ buffer -> Record? in
                       reader.reset(bytes: buffer)
                       guard let value = try? fast(&reader), (try? reader.expectEnd()) != nil else { return nil }
                       return value
                   }) {
                    try body(.success(record), bad)
                    continue
                }
                do {
                    try body(.success(try decoder.decode(Record.self, from: Data(bytes))), bad)
                } catch let error as DecodingError {
                    try body(.failure(bad(error.readable)), bad)
                }
            }
        }
    }
}

extension JSONRecordDecoding where Record: FastJSONRecord {
    /// As `forEach` above, each record read by `Record.read` first.
    func forEach(_ body: (Result<Record, BadRecord>, Locator) throws -> Void) throws {
        try forEach(fast: { reader in try Record.read(&reader) }, body)
    }
}

/// A record type with a hand-written reader for the common case: plain strings and
/// integers, no surprises. It returns nil (or throws) at anything else, and JSONDecoder
/// then decodes the record (and words the error, if there is one). A users export of
/// 100,000 records spent most of a re-run in JSONDecoder's per-call set-up.
protocol FastJSONRecord {
    static func read(_ reader: inout JSONReader) throws -> Self?
}

extension JSONReader {
    /// A string or null (nil); throws at anything else.
    mutating func optionalString() throws -> String? {
        if try null() { return nil }
        return try stringValue()
    }
}

/// A text field that may hold something else in a messy export (a number as a URL, an
/// object as a name): read as absent, and what was found kept for the report.
struct LenientString: Decodable {
    var value: String?
    /// What the field held instead of text ("a number", "an object", …).
    var found: String?

    init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() { return }
        do {
            value = try container.decode(String.self)
            return
        } catch DecodingError.typeMismatch {
            // Not text: what is it? (Any other error, such as invalid UTF-8, is the record's.)
        }
        if (try? container.decode(Bool.self)) != nil {
            found = "true or false"
        } else if (try? container.decode(Double.self)) != nil {
            found = "a number"
        } else if (try? container.decode([LenientString].self)) != nil {
            found = "an array"
        } else {
            found = "an object"
        }
    }

    init() {}
}

extension KeyedDecodingContainer {
    /// A text field, absent when it holds something else; `problems` gets the key and what
    /// it held.
    func lenientString(_ key: Key, _ problems: inout [(field: String, found: String)]) throws -> String? {
        guard let field = try decodeIfPresent(LenientString.self, forKey: key) else { return nil }
        if let found = field.found { problems.append((key.stringValue, found)) }
        return field.value
    }
}

/// An `id` given as a string or a number.
struct FlexibleID: Decodable {
    var value: String

    init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let text = try? container.decode(String.self) {
            value = text.trimmedWhitespace
        } else if let number = try? container.decode(Int64.self) {
            value = String(number)
        } else {
            throw DecodingError.typeMismatch(FlexibleID.self, .init(codingPath: decoder.codingPath, debugDescription: "expected a string or an integer"))
        }
    }

    init(value: String) { self.value = value }

    /// A string without surrounding white space, or an integer; throws at anything else
    /// (JSONDecoder then decodes the record: it trims the white space).
    static func read(_ reader: inout JSONReader) throws -> FlexibleID {
        guard try reader.peek() == UInt8(ascii: "\"") else { return FlexibleID(value: String(try reader.integer())) }
        let text = try reader.stringValue()
        guard let first = text.utf8.first, let last = text.utf8.last else { return FlexibleID(value: "") }
        guard !JSONReader.isWhitespace(first), !JSONReader.isWhitespace(last) else {
            throw reader.failure("an id with white space around it")
        }
        return FlexibleID(value: text)
    }
}

/// A date given as ISO 8601 text (with or without fractional seconds), seconds or
/// milliseconds since 1970, or Firestore's `{"seconds": …, "nanoseconds": …}`.
struct FlexibleDate: Decodable {
    var value: Date

    init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let text = try? container.decode(String.self), let date = ISO8601.parse(text) {
            value = date
        } else if let number = try? container.decode(Double.self) {
            value = Date(timeIntervalSince1970: number > 1e11 ? number / 1000 : number)
        } else if let stamp = try? container.decode(FirestoreTimestamp.self) {
            value = Date(timeIntervalSince1970: stamp.seconds + (stamp.nanoseconds ?? 0) / 1e9)
        } else {
            throw DecodingError.typeMismatch(FlexibleDate.self, .init(codingPath: decoder.codingPath, debugDescription: "expected a date"))
        }
    }

    private struct FirestoreTimestamp: Decodable {
        var seconds: Double
        var nanoseconds: Double?
    }
}

extension JSONRecordStream.RecordError {
    /// The export is not JSON at all (rather than one broken record).
    var isNotJSON: Bool { description.hasPrefix("the export does not start with") }
}

extension FlexibleID: ReadableTypeName {
    package static var readableName: String { "a string or an integer" }
}

extension FlexibleDate: ReadableTypeName {
    package static var readableName: String { "a date" }
}
