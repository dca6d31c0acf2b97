import Foundation

/// A fetched photo: its bytes, their SHA-256, and what revalidation needs later.
public struct FetchedPhoto: Sendable {
    public var bytes: [UInt8]
    public var sha256: String
    public var etag: String?
    public var lastModified: String?
    /// The freshness lifetime the server stated (Cache-Control max-age, Expires), if any.
    public var freshnessLifetime: TimeInterval?
}

/// What a fetch gives: new bytes, or the server's word that the cached ones are current.
public enum FetchResult: Sendable {
    case fetched(FetchedPhoto)
    /// `304 Not Modified`, with the freshness lifetime the server stated, if any.
    case notModified(freshnessLifetime: TimeInterval?, etag: String?, lastModified: String?)
}
