import Foundation

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
