import Foundation
import Testing
import AvatarCache
import AvatarCacheTestKit

/// The library as a program that runs the pipeline itself links it: one import,
/// `AvatarCache`, names every layer (a layer the umbrella stops re-exporting fails to
/// compile here), and a warm, its cache and its report work through it.
@Suite struct UmbrellaTests {
    @Test func oneImportNamesEveryLayer() throws {
        // Model and Monograms: a profile as readers make it, its initials and colour.
        let profile = Profile(id: "user-7", displayName: "Ann Lee", colorHex: "#zzzzzz")
        #expect(profile.initials == "AL" && profile.colorHex == nil)
        #expect(AvatarColor.palette.contains(AvatarColor.paletteColor(forUserID: profile.id)))
        #expect(AvatarKind(rawValue: "monogram") == .monogram)
        // Support: the sizes operators write.
        #expect(ByteSize.parse("100MB") == 100_000_000)
        // Exports: a format told by its contents.
        let directory = try Fixtures.temporaryDirectory("umbrella-names")
        defer { try? FileManager.default.removeItem(at: directory) }
        let export = try Fixtures.writeUsersExport([(id: "u1", name: "Ann Lee", url: nil)], in: directory)
        #expect(try ExportFormat.detect(path: export) == .nexusUsers)
        // Fetching: its limits and policy.
        #expect(FetchLimits().timeout > 0)
        // Imaging: a photo rendered to its tiers.
        let rendered = try AvatarRenderer(tiers: [110, 48], maxPixels: 50_000_000).render(try Fixtures.photo("chelsea.jpg"))
        #expect(rendered.tiers.count == 2 && rendered.format == .jpeg)
        // Store, Configuration, Pipeline and Reporting: the types a run goes through.
        let _: [Any.Type] = [CacheDirectory.self, CacheStore.self, WarmConfiguration.self, PipelineSettings.self,
                             WarmPipeline.self, RunReport.self, ReportOutputs.self]
    }

    @Test func aWarmItsCacheAndItsReportThroughTheUmbrella() async throws {
        let directory = try Fixtures.temporaryDirectory("umbrella-warm")
        defer { try? FileManager.default.removeItem(at: directory) }
        let export = try Fixtures.writeUsersExport([(id: "a", name: "Ann Lee", url: nil), (id: "b", name: "Bo Kim", url: nil),
                                                    (id: "c", name: "Cy Ray", url: nil)], in: directory)
        let cache = directory.appendingPathComponent("cache")
        var configuration = WarmConfiguration(exports: [export], cacheDirectory: cache)
        configuration.fetchLimits.timeout = 5

        let report = try await WarmPipeline(configuration: configuration, logger: .test).run()

        #expect(report.profiles == 3 && report.profilesWithMonogram == 3 && report.failed == 0, "\(report.summary)")
        let statistics = try CacheStore.statistics(CacheDirectory(root: cache), budgetBytes: try #require(ByteSize.parse("100MB")))
        #expect(statistics.profiles == 3 && statistics.monogramEntries == 3 && statistics.photoEntries == 0)
        #expect(statistics.files > 0 && statistics.cacheBytes > 0 && statistics.cacheBytes <= statistics.budgetBytes)
        #expect(ReportOutputs.prometheus(report, exitCode: 0).contains("\navatar_cache_profiles 3\n"))
        #expect(ReportOutputs.markdown(report, exitCode: 0).contains("| profiles showing a photo / monogram | 0 / 3 |"))
    }
}
