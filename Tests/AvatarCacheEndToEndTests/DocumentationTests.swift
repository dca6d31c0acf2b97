import Foundation
import Testing
@testable import AvatarCacheConfiguration
@testable import AvatarCacheStore
@testable import AvatarCacheLookup
import AvatarCacheTestKit

/// The pages keep naming what the code has: every field of `metadata.json`,
/// every command, flag and exit code. (`warm`'s defaults:
/// SettingsTableTests; the pipeline-file keys: AvatarCacheConfigurationTests'
/// PipelineKeysDocumentedTests; links and the README's shape: scripts/check-docs.)
@Suite struct DocumentationTests {
    @Test func theDocsNameEverySubcommandFlagAndExitCode() throws {
        // The commands and flags as swift-argument-parser knows them, against the pages
        // where they are documented: a section per command in docs/commands.md, the exit
        // codes' table in docs/guide.md.
        let commands = try Fixtures.page("docs/commands.md"), guide = try Fixtures.page("docs/guide.md")
        let readme = commands + guide
        let dump = try Binary.run(["--experimental-dump-help"])
        let root = try #require(try JSONSerialization.jsonObject(with: Data(dump.stdout.utf8)) as? [String: Any])
        let subcommands = try #require((root["command"] as? [String: Any])?["subcommands"] as? [[String: Any]])
        var checked = 0
        for subcommand in subcommands {
            guard let name = subcommand["commandName"] as? String, name != "help" else { continue }
            #expect(commands.contains("\n## `avatar-cache \(name)"), "docs/commands.md has a section for \(name)")
            for argument in subcommand["arguments"] as? [[String: Any]] ?? [] {
                for flag in argument["names"] as? [[String: Any]] ?? [] where flag["kind"] as? String == "long" {
                    guard let long = flag["name"] as? String, !["help", "version"].contains(long) else { continue }
                    // The flag itself, not a longer one it begins (--max-ttl-hours in --max-ttl-hours-x).
                    #expect(readme.range(of: "--\(long)(?![a-z-])", options: .regularExpression) != nil, "the docs name --\(long) of \(name)")
                    checked += 1
                }
            }
        }
        #expect(checked > 60)
        // Every exit code the tool uses has a row in the table.
        for code in [0, 3, 4, 64, 65, 66, 70, 73, 74, 75] {
            #expect(guide.contains("| \(code) |"), "exit code \(code) is in docs/guide.md")
        }
    }
}
