import Foundation

/// Decodes each record of a JSON export (array, `{"<key>": [...]}` or NDJSON) on its
/// own, so one bad record is reported and the rest go on. Shared by the JSON readers.
struct JSONRecordDecoding<Record: Decodable> {
    let path: String
    let recordsKey: String
    let limits: ReaderLimits

    /// Calls `body` with each record or the reason it is bad; the second argument makes
    /// a `BadRecord` for that record (index and line) when the reader refuses it later.
    func forEach(_ body: (Result<Record, BadRecord>, (String) -> BadRecord) throws -> Void) throws {
        let stream: JSONRecordStream
        do {
            stream = try JSONRecordStream(path: path, recordsKey: recordsKey, maxRecordBytes: limits.maxRecordBytes)
        } catch {
            throw ExportError(file: path, reason: "cannot open: \(error.localizedDescription)")
        }
        let decoder = JSONDecoder()
        let fast = Record.self as? FastJSONRecord.Type
        for record in stream {
            func bad(_ reason: String) -> BadRecord {
                BadRecord(file: path, index: record.index, line: record.line, reason: reason)
            }
            switch record.bytes {
            case .failure(let error):
                if record.index == 1, error.isNotJSON {
                    throw ExportError(file: path, reason: error.description)
                }
                try body(.failure(bad(error.description)), bad)
            case .success(let bytes):
                if let fast,
                   let record = bytes.withUnsafeBytes({ buffer -> Record? in
                       var reader = JSONBytesReader(buffer)
                       guard let value = fast.read(&reader), reader.atEnd else { return nil }
                       return value as? Record
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

/// A record type with a hand-written reader for the common case: plain strings and
/// integers, no surprises. It returns nil at anything else, and JSONDecoder then decodes
/// the record (and words the error, if there is one). A users export of 100,000 records
/// spent most of a re-run in JSONDecoder's per-call set-up.
protocol FastJSONRecord {
    static func read(_ reader: inout JSONBytesReader) -> Self?
}

extension JSONBytesReader {
    /// A string or null (nil means neither).
    mutating func optionalString() -> String?? {
        if null() { return .some(nil) }
        return string().map { .some($0) }
    }
}

/// An `id` given as a string or a number.
struct FlexibleID: Decodable {
    var value: String

    init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let text = try? container.decode(String.self) {
            value = text.trimmingCharacters(in: .whitespacesAndNewlines)
        } else if let number = try? container.decode(Int64.self) {
            value = String(number)
        } else {
            throw DecodingError.typeMismatch(FlexibleID.self, .init(codingPath: decoder.codingPath, debugDescription: "expected a string or an integer"))
        }
    }

    init(value: String) { self.value = value }

    /// A string without surrounding white space, or an integer; nil for anything else.
    static func read(_ reader: inout JSONBytesReader) -> FlexibleID? {
        if let text = reader.string() {
            guard let first = text.utf8.first, let last = text.utf8.last,
                  ![0x20, 0x09, 0x0A, 0x0D].contains(first), ![0x20, 0x09, 0x0A, 0x0D].contains(last) else {
                return text.isEmpty ? FlexibleID(value: "") : nil
            }
            return FlexibleID(value: text)
        }
        return reader.int().map { FlexibleID(value: String($0)) }
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

extension DecodingError {
    /// "field \"id\": expected a string"-style text.
    var readable: String {
        func path(_ context: Context) -> String {
            let keys = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }
            return keys.isEmpty ? "record" : "field \"\(keys.joined(separator: "."))\""
        }
        switch self {
        case let .keyNotFound(key, context):
            let parent = context.codingPath.map(\.stringValue).joined(separator: ".")
            return "missing field \"\(parent.isEmpty ? "" : parent + ".")\(key.stringValue)\""
        case let .typeMismatch(type, context):
            return "\(path(context)): expected \(Self.name(type))"
        case let .valueNotFound(type, context):
            return "\(path(context)): expected \(Self.name(type)), found null"
        case let .dataCorrupted(context):
            let underlying = (context.underlyingError as NSError?)?.userInfo[NSDebugDescriptionErrorKey] as? String
            return "not valid JSON: \(underlying ?? context.debugDescription)"
        @unknown default:
            return String(describing: self)
        }
    }

    private static func name(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: return "a string"
        case is FlexibleID.Type: return "a string or an integer"
        case is FlexibleDate.Type: return "a date"
        case is Int.Type, is Int64.Type, is Double.Type: return "a number"
        case is Bool.Type: return "true or false"
        case is [String].Type: return "an array of strings"
        default:
            let text = String(describing: type)
            return text.hasPrefix("Array") ? "an array" : "an object"
        }
    }
}

/// ISO 8601 with or without fractional seconds; the form metadata.json writes.
/// RFC 3339 timestamps ("2026-11-21T23:45:04.029Z"), read and written by hand: the
/// cache's metadata holds several per entry and profile, and ICU's formatter took half
/// of a re-run's time. Anything the fast path does not recognise (unusual offsets,
/// week dates) goes to ISO8601DateFormatter.
enum ISO8601 {
    nonisolated(unsafe) private static let fractional: ISO8601DateFormatter = {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter
    }()
    nonisolated(unsafe) private static let whole = ISO8601DateFormatter()
    private static let lock = NSLock()

    static func parse(_ text: String) -> Date? {
        var text = text
        if let date = text.withUTF8({ parseFast($0) }) { return date }
        return lock.withLock { fractional.date(from: text) ?? whole.date(from: text) }
    }

    /// Milliseconds (nearest), UTC, "Z": the form every file this tool writes uses.
    static func format(_ date: Date) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(24)
        append(date, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends `format(date)`'s bytes (the metadata writer calls this for every date).
    static func append(_ date: Date, to bytes: inout [UInt8]) {
        let milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded())
        let (days, rest) = floorDivision(milliseconds, 86_400_000)
        let (year, month, day) = civil(fromDays: days)
        guard (0...9999).contains(year) else {
            bytes.append(contentsOf: Array(lock.withLock { fractional.string(from: date) }.utf8))
            return
        }
        let hour = Int(rest / 3_600_000), minute = Int(rest / 60_000 % 60)
        let second = Int(rest / 1000 % 60), millisecond = Int(rest % 1000)
        func two(_ value: Int) { bytes.append(UInt8(48 + value / 10)); bytes.append(UInt8(48 + value % 10)) }
        two(year / 100); two(year % 100); bytes.append(45); two(month); bytes.append(45); two(day); bytes.append(84)
        two(hour); bytes.append(58); two(minute); bytes.append(58); two(second); bytes.append(46)
        bytes.append(UInt8(48 + millisecond / 100)); two(millisecond % 100); bytes.append(90)
    }

    /// YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM), or nil.
    static func parseFast(_ text: UnsafeBufferPointer<UInt8>) -> Date? {
        var index = 0
        func number(_ width: Int) -> Int? {
            guard index + width <= text.count else { return nil }
            var value = 0
            for _ in 0..<width {
                let digit = Int(text[index]) - 48
                guard (0...9).contains(digit) else { return nil }
                value = value * 10 + digit
                index += 1
            }
            return value
        }
        func expect(_ byte: UInt8) -> Bool {
            guard index < text.count, text[index] == byte else { return false }
            index += 1
            return true
        }
        guard let year = number(4), expect(45), let month = number(2), expect(45), let day = number(2),
              index < text.count, text[index] == 84 || text[index] == 116 else { return nil }
        index += 1
        guard let hour = number(2), expect(58), let minute = number(2), expect(58), let second = number(2),
              (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day),
              hour < 24, minute < 60, second < 61 else { return nil }
        var fraction = 0.0
        if index < text.count, text[index] == 46 {
            index += 1
            var scale = 0.1, digits = 0
            while index < text.count, (48...57).contains(text[index]) {
                fraction += Double(text[index] - 48) * scale
                scale /= 10
                index += 1
                digits += 1
            }
            guard digits > 0 else { return nil }
        }
        guard index < text.count else { return nil }
        var offset = 0
        switch text[index] {
        case 90, 122:
            index += 1
        case 43, 45:
            let sign = text[index] == 45 ? -1 : 1
            index += 1
            guard let hours = number(2), expect(58), let minutes = number(2), hours < 24, minutes < 60 else { return nil }
            offset = sign * (hours * 3600 + minutes * 60)
        default:
            return nil
        }
        guard index == text.count else { return nil }
        let days = Self.days(fromCivil: year, month, day)
        let seconds = Int64(days) * 86_400 + Int64(hour * 3600 + minute * 60 + second) - Int64(offset)
        return Date(timeIntervalSince1970: Double(seconds) + fraction)
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    private static func floorDivision(_ value: Int64, _ divisor: Int64) -> (Int64, Int64) {
        let quotient = value >= 0 ? value / divisor : (value - divisor + 1) / divisor
        return (quotient, value - quotient * divisor)
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
    private static func days(fromCivil year: Int, _ month: Int, _ day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    private static func civil(fromDays days: Int64) -> (Int, Int, Int) {
        let z = Int(days) + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
