import Foundation
import Testing
@testable import AvatarCacheFetching

/// The Monica token goes only to the exact host (and port) it was given for.
@Suite struct MonicaCredentialTests {
    @Test func monicaHostMatchingIsExact() {
        let credential = MonicaCredential(host: "monica.example.com", token: "t")
        #expect(credential.matches(URL(string: "https://monica.example.com/a.jpg")!))
        #expect(credential.matches(URL(string: "https://MONICA.example.com:443/a.jpg")!))
        #expect(!credential.matches(URL(string: "https://monica.example.com.evil.test/a.jpg")!))
        #expect(!credential.matches(URL(string: "https://evil.test/monica.example.com/a.jpg")!))
        #expect(!credential.matches(URL(string: "https://sub.monica.example.com/a.jpg")!))
        #expect(!credential.matches(URL(string: "https://monica.example.com:8443/a.jpg")!))
        #expect(MonicaCredential(host: "monica.example.com:8443", token: "t").matches(URL(string: "https://monica.example.com:8443/a.jpg")!))
    }
}
