/// The classes a failed source falls into; the report counts failures by class.
public enum FailureClass: String, Sendable, Codable, CaseIterable, Comparable {
    case invalidURL
    case blocked
    case unauthorized
    case notFound
    case httpStatus
    case timeout
    case network
    case tooLarge
    case invalidImage
    case tooManyPixels
    case unsupportedFormat
    /// The host's rate limits held it past `--max-host-wait`: asked again on the next run.
    case rateLimited

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }

    /// Failures decided here without asking anyone (the URL's scheme, the network policy):
    /// never remembered, so a change of policy (`--allow-private-networks`) takes effect
    /// on the next run.
    public var isDecidedLocally: Bool {
        self == .blocked || self == .invalidURL
    }

    /// Failures that may pass by themselves (the server was slow, down, or busy).
    public var isTransient: Bool {
        self == .timeout || self == .network || self == .httpStatus || self == .rateLimited
    }
}

/// One source that could not be cached, with its class and a readable reason.
public struct SourceFailure: Error, Sendable, Equatable, CustomStringConvertible {
    public var failureClass: FailureClass
    public var reason: String

    public init(_ failureClass: FailureClass, _ reason: String) {
        self.failureClass = failureClass
        self.reason = abbreviated(reason, limit: ShownText.maxReasonCharacters)
    }

    public var description: String { "\(failureClass.rawValue): \(reason)" }
}
