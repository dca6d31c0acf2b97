import Foundation
import Testing
import AvatarCacheTestKit

/// An intranet photo server whose certificate the operator's own authority signed, through
/// the built binary's `--ca-file` (the fetcher's own connection tests, HTTP/2 rotation
/// among them: AvatarCacheFetchingTests' ConnectionRotationTests).
@Suite struct OperatorCertificateTests {
    /// An intranet photo server whose certificate the operator's own authority signed:
    /// refused in words without `--ca-file`, fetched with it; a CA file that is not one is
    /// refused before the run.
    @Test func anOperatorsOwnCertificateAuthority() throws {
        let authority = try TestCertificateAuthority()
        defer { authority.remove() }
        let server = try TLSFixtureServer(authority: authority, body: try Fixtures.photo("chelsea.jpg"))
        defer { server.shutdown() }
        let directory = try Fixtures.temporaryDirectory("ca-file")
        defer { try? FileManager.default.removeItem(at: directory) }
        let export = try Fixtures.writeUsersExport((0..<3).map { (id: "u\($0)", name: "U \($0)", url: Optional(server.url("/\($0).jpg"))) }, in: directory)
        let report = directory.appendingPathComponent("report.json").path
        let untrusted = try Binary.run(["warm", export, "--cache", directory.appendingPathComponent("cache-1").path, "--allow-private-networks",
                                        "--report", report, "--retries", "0"])
        #expect(untrusted.status == 0, "\(untrusted.stderr)")
        let reasons = try String(contentsOfFile: report, encoding: .utf8)
        #expect(untrusted.stdout.contains("3 failed"), "\(untrusted.stdout)")
        #expect(reasons.contains("TLS certificate not trusted: signed by an authority this machine does not trust (--ca-file trusts an intranet's own)"), "\(reasons.prefix(2000))")
        #expect(!reasons.contains("NIOSSL") && !reasons.contains("BoringSSL"), "words, not a library's dump")

        let trusted = try Binary.run(["warm", export, "--cache", directory.appendingPathComponent("cache-2").path, "--allow-private-networks",
                                      "--ca-file", authority.caFile])
        #expect(trusted.status == 0, "\(trusted.stderr)")
        #expect(trusted.stdout.contains("3 downloaded") && trusted.stdout.contains(", 0 failed"), "\(trusted.stdout)")

        let notACertificate = directory.appendingPathComponent("not-a-ca.pem").path
        try "hello".write(toFile: notACertificate, atomically: true, encoding: .utf8)
        for (path, words) in [(notACertificate, "no PEM certificate in it"), (directory.appendingPathComponent("absent.pem").path, "cannot read the file")] {
            let refused = try Binary.run(["warm", export, "--cache", directory.appendingPathComponent("cache-3").path, "--ca-file", path])
            #expect(refused.status == 64 && refused.stderr.contains(words), "\(refused.stderr)")
        }
    }
}
