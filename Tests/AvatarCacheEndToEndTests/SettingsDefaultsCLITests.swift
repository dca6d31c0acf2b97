import Foundation
import Testing
@testable import AvatarCacheConfiguration
@testable import AvatarCacheStore
import AvatarCacheTestKit

/// One default for the budget and the trim ratio and the readers' own record limit, as
/// the binary takes them (the table of settings itself: AvatarCacheEngineTests'
/// SettingsTableTests).
@Suite struct SettingsDefaultsCLITests {
    @Test func oneDefaultForTheBudgetAndTrimRatioAndTheReadersOwnRecordLimit() throws {
        // One range for the trim ratio, flags and pipeline files alike.
        let directory = try Fixtures.temporaryDirectory("settings")
        defer { try? FileManager.default.removeItem(at: directory) }
        let export = try Fixtures.writeUsersExport([(id: "small", name: "Small", url: nil),
                                                    (id: "large", name: String(repeating: "L", count: 5_000), url: nil)], in: directory)
        let cache = directory.appendingPathComponent("c").path
        for command in [["prune", "--cache", cache], ["merge", cache, "--into", cache + "-m"]] {
            let result = try Binary.run(command + ["--trim-ratio", "0.001"])
            #expect(result.status == 64 && result.stderr.contains("between 0.01 and 1.0"), "\(command[0]): \(result.stderr)")
        }
        #expect(throws: PipelineFile.Errors.self) { try PipelineFile.parse("trim-ratio: 0.001\n", file: "p.yml", environment: [:]) }
        #expect(WarmConfiguration(exports: ["x"], cacheDirectory: URL(fileURLWithPath: "/tmp")).pruner.budgetBytes == Pruner.defaultBudgetBytes)
        // The readers' record limit is its own setting, not --max-bytes.
        let limited = try Binary.run(["warm", export, "--cache", cache, "--max-record-bytes", "2KB", "--max-bytes", "50MB", "--report", cache + ".json"])
        #expect(limited.status == 0, "\(limited.stderr)")
        #expect(limited.stderr.contains("larger than 2000 bytes") && limited.stdout.contains("1 profiles"), "\(limited.stdout) \(limited.stderr)")
        let roomy = try Binary.run(["warm", export, "--cache", cache + "2", "--max-bytes", "1KB"])
        #expect(roomy.status == 0 && roomy.stdout.contains("2 profiles"), "a small --max-bytes leaves records alone: \(roomy.stdout) \(roomy.stderr)")
    }
}
