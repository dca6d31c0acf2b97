import Foundation
import Testing
import AvatarCacheSupport
import AvatarCacheTestKit

/// scripts/install with the built binary: the binary and its shell completions under the
/// prefix (the deployment examples' YAML: AvatarCacheConfigurationTests'
/// DeploymentExamplesTests).
@Suite struct InstallScriptTests {
    @Test func theInstallPutsTheBinaryAndItsCompletionsUnderThePrefix() throws {
        let prefix = try Fixtures.temporaryDirectory("install")
        defer { try? FileManager.default.removeItem(at: prefix) }
        // The built binary (the release build is scripts/install's own; the rest is this).
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [Fixtures.repositoryRoot.appendingPathComponent("scripts/install").path,
                             "--prefix", prefix.path, "--binary", Binary.url.path]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = out
        try process.run()
        let output = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(output)")
        let installed = prefix.appendingPathComponent("bin/avatar-cache").path
        #expect(FileManager.default.isExecutableFile(atPath: installed))
        let version = try Binary.run(["--version"], executable: URL(fileURLWithPath: installed))
        #expect(version.status == 0 && version.stdout.contains(AvatarCacheVersion.string), "\(version)")
        for (path, marker) in [("share/bash-completion/completions/avatar-cache", "complete"),
                               ("share/zsh/site-functions/_avatar-cache", "#compdef avatar-cache"),
                               ("share/fish/vendor_completions.d/avatar-cache.fish", "complete -c")] {
            let text = try String(contentsOf: prefix.appendingPathComponent(path), encoding: .utf8)
            #expect(text.contains(marker) && text.contains("merge") && text.contains("shard"), "\(path)")
        }
        #expect(output.contains("is not on PATH"), "a prefix off PATH is pointed out: \(output)")
    }
}
