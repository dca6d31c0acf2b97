import Foundation
import Testing
import AvatarCacheTestKit

/// `--allow-private-networks` end to end, through redirects from a loopback server, run
/// in a private network namespace (`unshare -n`, only `lo` up, the server started inside):
/// were a refusal missing, the connection could reach nothing outside this namespace.
@Suite struct PrivateNetworkNamespaceTests {
    static let server = """
        import http.server, sys
        log = open(sys.argv[2], "a")
        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                log.write(self.path + "\\n"); log.flush()
                port = self.server.server_address[1]
                targets = {"/to-metadata": "http://169.254.169.254/latest/meta-data/",
                           "/to-unspecified": "http://0.0.0.0:%d/via-unspecified.jpg" % port,
                           "/to-mapped": "http://[::ffff:169.254.169.254]/latest/"}
                if self.path in targets:
                    self.send_response(302); self.send_header("Location", targets[self.path]); self.end_headers()
                elif self.path in ("/photo.jpg", "/via-unspecified.jpg"):
                    body = open(sys.argv[3], "rb").read()
                    self.send_response(200); self.send_header("Content-Length", str(len(body))); self.end_headers()
                    self.wfile.write(body)
                else:
                    self.send_response(404); self.end_headers()
            def log_message(self, *args): pass
        server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
        open(sys.argv[1] + ".tmp", "w").write(str(server.server_address[1])); __import__("os").rename(sys.argv[1] + ".tmp", sys.argv[1])
        server.serve_forever()
        """

    @Test(.enabled(if: Namespaces.network, "needs a private network namespace (unshare -n): run as root"))
    func privateNetworksAllowedStillRefuseLinkLocalAndUnspecifiedEvenAfterARedirect() throws {
        let directory = try Fixtures.temporaryDirectory("netns")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = { (name: String) in directory.appendingPathComponent(name).path }
        try Self.server.write(toFile: path("server.py"), atomically: true, encoding: .utf8)
        let users: [[String: String]] = [
            ["id": "ok", "displayName": "Lo Back", "profileImageUrl": "http://127.0.0.1:PORT/photo.jpg"],
            ["id": "redirected-to-metadata", "displayName": "Meta Data", "profileImageUrl": "http://127.0.0.1:PORT/to-metadata"],
            ["id": "redirected-to-unspecified", "displayName": "Zero Zero", "profileImageUrl": "http://127.0.0.1:PORT/to-unspecified"],
            ["id": "redirected-to-mapped", "displayName": "Map Ped", "profileImageUrl": "http://127.0.0.1:PORT/to-mapped"],
            ["id": "metadata", "displayName": "Cloud Meta", "profileImageUrl": "http://169.254.169.254/latest/meta-data/"],
            ["id": "mapped", "displayName": "Ipv Six", "profileImageUrl": "http://[::ffff:169.254.169.254]/latest/"],
            ["id": "unspecified", "displayName": "Any Where", "profileImageUrl": "http://0.0.0.0:PORT/via-unspecified.jpg"],
        ]
        try JSONSerialization.data(withJSONObject: ["users": users]).write(to: URL(fileURLWithPath: path("users.template.json")))
        let script = """
            set -u
            ip link set lo up
            python3 \(path("server.py")) \(path("port")) \(path("requests.log")) \(Fixtures.repositoryRoot.path)/samples/photos/chelsea-96.jpg &
            server=$!
            for _ in $(seq 1 100); do [ -s \(path("port")) ] && break; sleep 0.05; done
            sed "s/PORT/$(cat \(path("port")))/g" \(path("users.template.json")) > \(path("users.json"))
            \(Binary.url.path) warm \(path("users.json")) --cache \(path("cache")) --allow-private-networks --timeout 3 --report \(path("report.json"))
            status=$?
            kill $server
            wait $server 2>/dev/null
            exit $status
            """
        try script.write(toFile: path("run.sh"), atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
        process.arguments = ["-n", "--", "/bin/sh", path("run.sh")]
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(stderr)")

        let report = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path("report.json")))) as? [String: Any])
        #expect(report["downloaded"] as? Int == 1, "loopback is allowed with the flag")
        let failures = try #require(report["failures"] as? [[String: Any]])
        #expect(failures.count == 6)
        for failure in failures {
            #expect(failure["class"] as? String == "blocked", "\(failure)")
            #expect((failure["reason"] as? String)?.contains("only --allow-host") == true, "\(failure)")
        }
        // 0.0.0.0 reaches this host: the refusal came before any connection to it.
        let requests = try String(contentsOfFile: path("requests.log"), encoding: .utf8)
        #expect(!requests.contains("/via-unspecified.jpg"), "\(requests)")
        HostileLedger.record("network", "private networks allowed", tried: "with --allow-private-networks: 169.254.169.254 directly, as ::ffff:169.254.169.254, 0.0.0.0, and after 302 redirects from loopback to each (in a private network namespace)", count: 6, outcome: "blocked before any connection (link-local, unspecified: refused whatever that flag says; only --allow-host with the exact host opens them); loopback still served")
    }
}
