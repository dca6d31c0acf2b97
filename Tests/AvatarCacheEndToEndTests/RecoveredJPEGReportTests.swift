import Foundation
import Testing
import AvatarCacheImagingTestSupport
import AvatarCacheTestKit

/// A warm whose photo is a JPEG damaged as libjpeg recovers from: the run's report says
/// what it recovered from (the decoding itself: AvatarCacheImagingTests' RecoverableJPEGTests).
@Suite struct RecoveredJPEGReportTests {
    @Test func theRunReportsWhatItRecoveredFrom() throws {
        let directory = try Fixtures.temporaryDirectory("recovered")
        defer { try? FileManager.default.removeItem(at: directory) }
        var damaged = try Fixtures.photo("chelsea.jpg")
        damaged.insert(contentsOf: [0x00, 0x13, 0x37], at: SampleImages.jpegScanDataOffset(damaged) - 14)
        let server = try FixtureServer(routes: ["/damaged.jpg": .ok(bytes: damaged)])
        defer { server.shutdown() }
        let export = try Fixtures.writeUsersExport([(id: "1", name: "Dam Aged", url: server.url("/damaged.jpg"))], in: directory)
        let report = directory.appendingPathComponent("report.json").path
        let result = try Binary.run(["warm", export, "--cache", directory.appendingPathComponent("cache").path,
                                       "--allow-private-networks", "--report", report])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("source decoded past damage"), "\(result.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: report))) as? [String: Any])
        #expect(json["decoded"] as? Int == 1 && json["failed"] as? Int == 0)
        #expect(json["recoveredImages"] as? Int == 1)
        #expect(((json["recoveredImageDetails"] as? [[String: Any]])?.first?["reason"] as? String)?.contains("extraneous bytes") == true)
    }
}
