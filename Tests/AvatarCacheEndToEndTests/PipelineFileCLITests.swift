import Foundation
import Testing
@testable import AvatarCacheConfiguration
import AvatarCacheTestKit

/// Pipeline files against the built binary: every flag of `warm` is a key, and a file's
/// relative paths are taken from its folder when the binary runs it (the parser's own
/// tests are AvatarCacheConfigurationTests' PipelineFileTests).
@Suite struct PipelineFileCLITests {
    func parse(_ text: String, environment: [String: String] = [:]) throws -> PipelineSettings {
        try PipelineFile.parse(text, file: "test.yml", environment: environment)
    }

    @Test func everyFlagOfWarmIsAKeyInSingularAndPluralForms() throws {
        // The flags as swift-argument-parser knows them (its help dump), not a list kept here.
        let dump = try Binary.run(["warm", "--experimental-dump-help"])
        let json = try #require(try JSONSerialization.jsonObject(with: Data(dump.stdout.utf8)) as? [String: Any])
        let arguments = try #require((json["command"] as? [String: Any])?["arguments"] as? [[String: Any]])
        let flags = arguments.compactMap { argument -> String? in
            guard argument["kind"] as? String != "positional" else { return nil }
            return (argument["names"] as? [[String: Any]])?.first { $0["kind"] as? String == "long" }?["name"] as? String
        }.filter { !["help", "version", "cache"].contains($0) }
        #expect(flags.count > 30, "\(flags)")
        for flag in flags {
            #expect(PipelineFile.keys[flag] != nil, "--\(flag) has no pipeline key")
        }
        let settings = try parse("""
            size: 64
            scale: [2, 3]
            allow-host: photos.intranet:8443
            log-level: debug
            """)
        #expect(settings[Settings.sizes] == [64] && settings[Settings.scales] == [2, 3])
        #expect(settings[Settings.allowHosts] == ["photos.intranet:8443"] && settings[Settings.logLevel] == .some(.debug))
        let plural = try parse("sizes: [110, 300]\nallow-hosts: [a, b]\n")
        #expect(plural[Settings.sizes] == [110, 300] && plural[Settings.allowHosts] == ["a", "b"])
    }
}

extension PipelineFileCLITests {
    @Test func relativePathsInAPipelineFileAreTakenFromItsFolder() throws {
        let server = try FixtureServer(routes: ["/a.jpg": .ok(bytes: try Fixtures.photo("chelsea.jpg"))])
        defer { server.shutdown() }
        let directory = try Fixtures.temporaryDirectory("relative-paths")
        defer { try? FileManager.default.removeItem(at: directory) }
        let folder = directory.appendingPathComponent("etc")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("exports"), withIntermediateDirectories: true)
        _ = try Fixtures.writeUsersExport([(id: "1", name: "Ann Lee", url: server.url("/a.jpg"))], in: folder.appendingPathComponent("exports"))
        try Data("""
            cache: cache
            inputs: [exports/*.json]
            report: reports/../report.json
            allow-private-networks: true
            """.utf8).write(to: folder.appendingPathComponent("p.yml"))
        // Run from elsewhere (cron starts in a home directory).
        let elsewhere = directory.appendingPathComponent("home")
        try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
        let result = try Binary.run(["-c", "cd \(elsewhere.path) && \(Binary.url.path) run ../etc/p.yml"], executable: URL(fileURLWithPath: "/bin/sh"))
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent("cache/index.sqlite").path), "the cache beside the file")
        #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent("report.json").path))
        #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere.path).isEmpty, "nothing where the command ran")
    }
}
