import AvatarCacheLookup
import Foundation

/// A record that could not be used (or only in part), and why; the run reports it and
/// goes on.
public struct BadRecord: Error, Sendable, Codable, Equatable, CustomStringConvertible {
    public var file: String
    public var index: Int
    public var line: Int
    public var reason: String

    public init(file: String, index: Int, line: Int, reason: String) {
        self.file = file
        self.index = index
        self.line = line
        self.reason = abbreviated(reason, limit: ShownText.maxReasonCharacters)
    }

    public var description: String {
        index == 0 ? "\(file): \(reason)" : "\(file): record \(index)\(line > 0 ? " (line \(line))" : ""): \(reason)"
    }
}

/// What a reader yields, record by record.
public enum ExportItem: Sendable {
    case profile(Profile)
    case bad(BadRecord)
    /// What the reader chose or found, for the log (info) and the report: which
    /// collection and fields were read, and how many people had each.
    case note(String)
}

/// Why a whole export could not be read (as opposed to one bad record in it).
public struct ExportError: Error, CustomStringConvertible {
    public var file: String
    public var reason: String

    public init(file: String, reason: String) {
        self.file = file
        self.reason = reason
    }

    public var description: String { "\(file): \(reason)" }
}

/// Reads one export file (or folder), calling `body` for every record in order.
public protocol ExportReader {
    func read(_ body: (ExportItem) throws -> Void) throws
}

/// Limits readers apply to what an export carries.
public struct ReaderLimits: Sendable {
    /// Largest inline photo (vCard PHOTO, `data:` URL), decoded bytes. Default 20 MB.
    public var maxInlineBytes: Int = 20_000_000
    /// Largest single JSON record or vCard, in bytes (`--max-record-bytes`). Default
    /// 28 MB: room for a 20 MB inline photo in base64, plus 1 MB.
    public var maxRecordBytes: Int = ReaderLimits.defaultMaxRecordBytes
    public static let defaultMaxRecordBytes = 28_000_000

    public init() {}
}
