import AvatarCacheModel
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// URLs as they may appear in logs, reports and metadata keys: without user-info
/// (`http://user:secret@host/` becomes `http://host/`), so no credential is written.
public func redactedURL(_ string: String) -> String {
    // No "@", no user or password: the common case, without parsing.
    guard string.utf8.contains(UInt8(ascii: "@")) else { return string }
    guard var components = URLComponents(string: string), components.user != nil || components.password != nil else {
        return string
    }
    components.user = nil
    components.password = nil
    return components.string ?? string
}

/// A URL as every output shows it (log lines, the report, verify, errors): redacted, and
/// cut when longer than `ShownText.maxURLCharacters` (a 100 KB URL in an export is not
/// copied whole into each). The cache's keys keep the whole URL.
public func shownURL(_ string: String) -> String {
    abbreviated(redactedURL(string), limit: ShownText.maxURLCharacters)
}

/// Limits on text copied from inputs into outputs.
public enum ShownText {
    /// URLs longer than this are shown as their first 200 characters and a hash.
    public static let maxURLCharacters = 300
    /// Reasons (a failure's, a bad record's) longer than this are cut the same way.
    public static let maxReasonCharacters = 1_000
}

/// `text` when at most `limit` characters; else its first 200 (or limit − 100), then
/// "…(N characters, sha256 <16 hex>)", the hash keeping different long texts apart.
public func abbreviated(_ text: String, limit: Int) -> String {
    guard text.utf8.count > limit, text.count > limit else { return text }
    let kept = text.prefix(min(200, max(limit - 100, 1)))
    let digest = Digests.sha256Hex(text.utf8).prefix(16)
    return "\(kept)…(\(text.count) characters, sha256 \(digest))"
}
