import Foundation
import Testing
import AvatarCacheTestKit

/// A folder of vCards with one cut short, warmed by the binary (the vCard reader itself:
/// AvatarCacheExportsTests' SeedReadersTests and VCardFormsTests).
@Suite struct LostCardTests {
    /// A vCard cut short fails the run with exit 5, unless --max-failure-rate allows it.
    @Test func aLostCardFailsTheRunUnlessAllowed() throws {
        let scratch = try Fixtures.temporaryDirectory("lost-card")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let folder = scratch.appendingPathComponent("cards").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try "BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Ada Lovelace\r\nEND:VCARD\r\n".write(toFile: folder + "/ada.vcf", atomically: true, encoding: .utf8)
        try "BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Cut Sh".write(toFile: folder + "/cut.vcf", atomically: true, encoding: .utf8)
        let cache = scratch.appendingPathComponent("cache").path
        let lost = try Binary.run(["warm", folder, "--cache", cache])
        #expect(lost.status == 5, "\(lost.stderr)")
        #expect(lost.stdout.contains("cards read 1 of 2 stated (1 LOST)"), "\(lost.stdout)")
        #expect(lost.stderr.contains("cut.vcf") && lost.stderr.contains("truncated"), "\(lost.stderr)")
        let allowed = try Binary.run(["warm", folder, "--cache", cache, "--max-failure-rate", "0.5"])
        #expect(allowed.status == 0, "\(allowed.stderr)")
    }
}
