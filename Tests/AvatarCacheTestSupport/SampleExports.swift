import Foundation
import AvatarCacheConfiguration
import AvatarCacheFetching
import AvatarCacheStore
import AvatarCacheSupport
import AvatarCacheTestKit

/// The three systems' samples (samples/), photos served on loopback as the demo does,
/// the exports rewritten to point at the server; all removed with the instance.
package final class SampleExports {
    package let server: FixtureServer
    package let directory: URL
    package var exports: [String] = []

    /// `monicaOnLocalhost`: Monica's URLs served as "localhost" (so its host differs from
    /// the photos' and the token has a host of its own), else as 127.0.0.1 like them.
    package init(label: String, monicaOnLocalhost: Bool = true) throws {
        var routes: [String: FixtureServer.Reply] = [:]
        let photos = Fixtures.repositoryRoot.appendingPathComponent("samples/photos")
        for name in try FileManager.default.contentsOfDirectory(atPath: photos.path) {
            routes["/photos/\(name)"] = .ok(bytes: try Fixtures.photo(name))
        }
        server = try FixtureServer(routes: routes)
        directory = try Fixtures.temporaryDirectory(label)
        for sample in ["nexus-users.json", "nexus-conversations.json", "monica/contacts-page-1.json", "monica/contacts-page-2.json"] {
            let text = try String(contentsOf: Fixtures.repositoryRoot.appendingPathComponent("samples/\(sample)"), encoding: .utf8)
                .replacingOccurrences(of: "https://avatars.example.com", with: server.baseURL)
                .replacingOccurrences(of: "https://monica.example.com", with: monicaOnLocalhost ? "http://localhost:\(server.port)" : server.baseURL)
            let path = directory.appendingPathComponent(sample.replacingOccurrences(of: "/", with: "-")).path
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
            exports.append(path)
        }
        exports.append(Fixtures.repositoryRoot.appendingPathComponent("samples/jami").path)
    }

    package func configuration(_ cache: String, shard: Shard? = nil) -> WarmConfiguration {
        var configuration = Fixtures.configuration(exports: exports, cache: directory.appendingPathComponent(cache))
        configuration.monica = MonicaCredential(host: "localhost:\(server.port)", token: "test-token")
        configuration.pruner.budgetBytes = 1_000_000_000
        configuration.shard = shard
        return configuration
    }

    package func cache(_ name: String) -> CacheDirectory { CacheDirectory(root: directory.appendingPathComponent(name)) }

    deinit {
        server.shutdown()
        try? FileManager.default.removeItem(at: directory)
    }
}
