import Foundation
import Testing
@testable import AvatarCacheExports

/// A record's value read by the JSON tokenizer is the value JSONDecoder reads (which it
/// was read by before): numbers whole or not, keys sorted with the first of a repeated
/// one kept, strings unescaped, and what is not JSON refused alike.
struct JSONDocumentValueTests {
    static func decoded(_ bytes: [UInt8]) -> DocumentValue? {
        (try? JSONDecoder().decode(JSONDocumentValue.self, from: Data(bytes)))?.value
    }

    @Test func theTokenizerReadsWhatJSONDecoderReads() {
        let records = [
            #"{"id": "u1", "name": "Ada", "photo": null, "admin": true, "n": 3, "x": -2.5, "e": 1e2, "f": 1.0, "g": -0.0}"#,
            #"{"b": 1, "a": 2, "b": 3, "é": "\u00e9\ud83d\ude00\n", "nested": {"z": [1, [2, {"y": false}]], "a": {}}}"#,
            #"{"big": 9223372036854775807, "bigger": 9223372036854775808, "small": -9223372036854775808, "tiny": 1e-300}"#,
            #"{"huge": 12345678901234567890.0, "exp": 1.5e1, "negexp": 15E-1}"#,
            #"[1, "two", null, {"three": 3}]"#, #""text""#, "42", "true", "null",
            // Not JSON to either.
            #"{"a": 01}"#, #"{"a": 1.}"#, #"{"a": +1}"#, #"{"a": .5}"#, #"{"a": 1-2}"#, #"{"a": tru}"#, #"{"a": 1,}"#,
            #"{"a" 1}"#, #"{"a": "\q"}"#, #"{"a": "\ud800"}"#, "{\"a\": \"\u{1}\"}", #"{"a": 1} x"#, "", "{",
            String(repeating: "[", count: 200) + String(repeating: "]", count: 200),
        ]
        for record in records {
            let bytes = Array(record.utf8)
            #expect(JSONDocumentValue.value(of: bytes) == Self.decoded(bytes), "\(record.prefix(80))")
        }
        // Bytes that are not UTF-8, in a value and in a key.
        for bytes: [UInt8] in [[0x7B, 0x22, 0x61, 0x22, 0x3A, 0x22, 0xE9, 0x22, 0x7D], [0x7B, 0x22, 0xE9, 0x22, 0x3A, 0x31, 0x7D]] {
            #expect(JSONDocumentValue.value(of: bytes) == nil && Self.decoded(bytes) == nil)
        }
    }

    @Test func numbersAndKeysAsJSONDecoderHasThem() throws {
        let value = try #require(JSONDocumentValue.value(of: Array(#"{"z": 1e2, "a": 1.5, "m": 7, "a": 2}"#.utf8)))
        #expect(value == .map(DocumentFields([("a", .double(1.5)), ("m", .integer(7)), ("z", .integer(100))])))
    }
}
