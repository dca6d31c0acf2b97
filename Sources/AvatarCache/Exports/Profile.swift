/// One person from an export: who they are and where their photo comes from.
public struct Profile: Sendable, Equatable {
    public var id: String
    public var displayName: String
    /// The photo URL, or nil when the profile has none (a monogram is drawn instead).
    public var photoURL: String?
    /// A colour the source assigned (`#RRGGBB`), when it gave one.
    public var colorHex: String?

    public init(id: String, displayName: String, photoURL: String?, colorHex: String? = nil) {
        self.id = id
        self.displayName = displayName
        self.photoURL = photoURL
        self.colorHex = colorHex
    }
}

/// A record that could not be used, and why; the run reports it and goes on.
public struct BadRecord: Sendable, Codable, Equatable, CustomStringConvertible {
    public var file: String
    public var index: Int
    public var line: Int
    public var reason: String

    public var description: String { "\(file): record \(index) (line \(line)): \(reason)" }
}

/// What a reader yields, record by record.
public enum ExportItem: Sendable {
    case profile(Profile)
    case bad(BadRecord)
}

/// Why a whole export could not be read (as opposed to one bad record in it).
public struct ExportError: Error, CustomStringConvertible {
    public var file: String
    public var reason: String
    public var description: String { "\(file): \(reason)" }
}
