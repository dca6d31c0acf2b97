import Foundation

/// Reads a NexusAI users export: a JSON array, `{"users": [...]}` or NDJSON, with
/// `id`, `displayName`, `email`, `profileImageUrl` and optional `avatarColorHex`.
///
/// An absent or empty `profileImageUrl` is not an error: that user gets a monogram.
public struct NexusUsersReader {
    public let path: String

    public init(path: String) { self.path = path }

    struct Record: Decodable {
        var id: FlexibleID
        var displayName: String?
        var email: String?
        var profileImageUrl: String?
        var avatarColorHex: String?
    }

    /// Calls `body` for every record, in file order.
    public func read(_ body: (ExportItem) throws -> Void) throws {
        let stream: JSONRecordStream
        do {
            stream = try JSONRecordStream(path: path, recordsKey: "users")
        } catch {
            throw ExportError(file: path, reason: "cannot open: \(error.localizedDescription)")
        }
        let decoder = JSONDecoder()
        for record in stream {
            func bad(_ reason: String) -> ExportItem {
                .bad(BadRecord(file: path, index: record.index, line: record.line, reason: reason))
            }
            let bytes: [UInt8]
            switch record.bytes {
            case .failure(let error):
                if record.index == 1, !sawUsable(error) {
                    throw ExportError(file: path, reason: error.description)
                }
                try body(bad(error.description))
                continue
            case .success(let value):
                bytes = value
            }
            do {
                let user = try decoder.decode(Record.self, from: Data(bytes))
                let id = user.id.value.trimmingCharacters(in: .whitespacesAndNewlines)
                guard !id.isEmpty else {
                    try body(bad("\"id\" is empty"))
                    continue
                }
                let url = user.profileImageUrl?.trimmingCharacters(in: .whitespacesAndNewlines)
                try body(.profile(Profile(
                    id: id,
                    displayName: user.displayName ?? "",
                    photoURL: (url?.isEmpty ?? true) ? nil : url,
                    colorHex: user.avatarColorHex
                )))
            } catch let error as DecodingError {
                try body(bad(error.readable))
            }
        }
    }

    /// A failure on the very first record that says the file is not JSON at all is a
    /// whole-export error; anything else is one bad record.
    private func sawUsable(_ error: JSONRecordStream.RecordError) -> Bool {
        !error.description.hasPrefix("the export does not start with")
    }
}

/// An `id` given as a string or a number.
struct FlexibleID: Decodable {
    var value: String

    init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let text = try? container.decode(String.self) {
            value = text
        } else if let number = try? container.decode(Int64.self) {
            value = String(number)
        } else {
            throw DecodingError.typeMismatch(String.self, .init(codingPath: decoder.codingPath, debugDescription: "expected a string or an integer"))
        }
    }
}

extension DecodingError {
    /// "field \"id\": expected String, found a number"-style text.
    var readable: String {
        func path(_ context: Context) -> String {
            let keys = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }
            return keys.isEmpty ? "record" : "field \"\(keys.joined(separator: "."))\""
        }
        switch self {
        case let .keyNotFound(key, _):
            return "missing field \"\(key.stringValue)\""
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
        case is Int.Type, is Int64.Type, is Double.Type: return "a number"
        case is Bool.Type: return "true or false"
        default:
            let text = String(describing: type)
            return text.contains("Dictionary") || text.contains("Record") ? "an object" : text
        }
    }
}
