import ArgumentParser
import AvatarCacheConfiguration
import AvatarCacheExports
import Foundation
import Testing
import AvatarCacheTestKit
@testable import avatar_cache_engine

/// Every registered format is in the help of the commands that read exports, in
/// `--format`'s choices, in docs/inputs.md (its row in the table and its line of the
/// detection list, which is the registry's: `ExportFormat.registered`) and in the README.
/// The binary's own help: `BinaryFormatHelpTests` (end to end).
@Suite struct ExportFormatHelpTests {
    @Test func warmAndInspectHelpListEveryFormat() throws {
        for command in [Warm.self, Inspect.self] as [ParsableCommand.Type] {
            let help = command.helpMessage(columns: 10_000)
            for kind in ExportFormat.registered {
                #expect(help.contains("  \(kind.format.rawValue)") && help.contains(kind.summary), "\(command) --help names \(kind.format)")
            }
        }
        #expect(Settings.format.choices == ExportFormat.allCases.map(\.rawValue), "--format's choices are the registry's")
    }

    /// The detection list in docs/inputs.md, as the registry writes it.
    static var detectionList: String {
        ExportFormat.registered.enumerated().map { "\($0.offset + 1). `\($0.element.format.rawValue)`: \($0.element.evidence)\n" }.joined()
    }

    @Test func theInputsPageHasARowAndADetectionLineForEveryFormat() throws {
        let page = try Fixtures.page("docs/inputs.md")
        let block = try #require(page.components(separatedBy: "<!-- BEGIN detection -->\n").dropFirst().first?
            .components(separatedBy: "<!-- END detection -->").first, "docs/inputs.md has a detection list")
        #expect(block == Self.detectionList, "docs/inputs.md's detection list should read:\n\(Self.detectionList)")
        let table = page.split(separator: "\n").drop { !$0.hasPrefix("| format |") }.prefix { $0.hasPrefix("|") }
        let rows = table.dropFirst(2).compactMap { $0.split(separator: "`").dropFirst().first.map(String.init) }
        #expect(rows.sorted() == ExportFormat.allCases.map(\.rawValue).sorted(), "docs/inputs.md's table has a row for each format, and no other: \(rows)")
    }

    @Test func theReadmeNamesEveryFormat() throws {
        let section = try #require(Fixtures.page("README.md").components(separatedBy: "## What it reads").dropFirst().first?
            .components(separatedBy: "\n## ").first, "README.md has a section \"What it reads\"")
        for format in ExportFormat.allCases {
            #expect(section.contains("`\(format.rawValue)`"), "README.md's \"What it reads\" names \(format)")
        }
    }
}
