import Foundation

/// The Monica API token and the one host it may be sent to (`host` or `host:port`,
/// matched exactly, never by substring, and never after a redirect to another host).
public struct MonicaCredential: Sendable {
    public var host: String
    public var token: String

    public init(host: String, token: String) {
        self.host = host.lowercased()
        self.token = token
    }

    /// Whether `url` is on the configured host (and port: an omitted port means the
    /// scheme's default).
    public func matches(_ url: URL) -> Bool {
        guard let host = url.host?.lowercased() else { return false }
        let defaultPort = url.scheme?.lowercased() == "https" ? 443 : 80
        let port = url.port ?? defaultPort
        let parts = self.host.split(separator: ":", maxSplits: 1)
        let configuredHost = String(parts[0])
        let configuredPort = parts.count == 2 ? Int(parts[1]) : defaultPort
        return host == configuredHost && port == configuredPort
    }
}
