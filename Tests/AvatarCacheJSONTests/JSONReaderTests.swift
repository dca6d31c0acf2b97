import Foundation
import Testing
@testable import AvatarCacheJSON

/// The tokenizer on real bytes: strings (escapes, surrogate pairs, UTF-8), numbers,
/// nesting, and what is not JSON refused with the byte offset where it stops being JSON;
/// the same answers from a file read in pieces of every size as from the bytes in memory.
struct JSONReaderTests {
    /// `body` run on `text` read from memory, then from a file in pieces of `pieceSizes`
    /// bytes; each run's result (or failure) handed back, so they can be compared.
    static func everyWay<T>(_ text: String, pieceSizes: [Int] = [1, 2, 3, 7, 64, 1 << 20],
                            _ body: (inout JSONReader) throws -> T) throws -> [Result<T, JSONReader.Failure>] {
        var results: [Result<T, JSONReader.Failure>] = []
        func run(_ reader: inout JSONReader) {
            do { results.append(.success(try body(&reader))) } catch let failure as JSONReader.Failure {
                results.append(.failure(failure))
            } catch {
                Issue.record("not a JSONReader.Failure: \(error)")
            }
        }
        Array(text.utf8).withUnsafeBytes { bytes in
            var reader = JSONReader(bytes: bytes)
            run(&reader)
        }
        let file = try TemporaryFile(text)
        for size in pieceSizes {
            var reader = try #require(JSONReader(path: file.path, pieceSize: size))
            run(&reader)
        }
        return results
    }

    /// The one answer every way gives; fails the test when they differ.
    static func answer<T: Equatable>(_ text: String, _ body: (inout JSONReader) throws -> T) throws -> Result<T, JSONReader.Failure> {
        let results = try everyWay(text, body)
        #expect(Set(results.map { "\($0)" }).count == 1, "memory and pieces differ for \(text.prefix(60)): \(results)")
        return results[0]
    }

    @Test func stringsAreUnescapedWithSurrogatePairs() throws {
        let text = #" "plain", "a\"b\\c\/d\b\f\n\r\t", "\u00e9\u4e2D\ud83d\ude00x", "é😀 raw", "" "#
        let strings = try Self.answer("[" + text.replacingOccurrences(of: "\" \"", with: "\",\"") + "]") { reader -> [String] in
            var out: [String] = []
            try reader.elements { reader in out.append(try reader.stringValue()) }
            try reader.expectEnd()
            return out
        }
        #expect(strings == .success(["plain", "a\"b\\c/d\u{8}\u{C}\n\r\t", "é中😀x", "é😀 raw", ""]))
        // The bytes, unescaped, as `string()` hands them over.
        let bytes = try Self.answer(#""\ud83d\ude00\u0041""#) { reader in try reader.string() }
        #expect(bytes == .success(Array("😀A".utf8)))
    }

    @Test func badStringsAreRefusedAtTheirByte() throws {
        let cases: [(String, Int, String)] = [
            (#""ab\q""#, 4, "an unknown escape in a string"),
            ("\"a\u{1}b\"", 2, "a control character in a string"),
            (#""abc"#, 4, "a string is not closed (truncated?)"),
            (#""ab\"#, 4, "a string is not closed (truncated?)"),
            (#""\ud800x""#, 7, "a lone surrogate in a string"),
            (#""\ud800\u0041""#, 13, "a lone surrogate in a string"),
            (#""\udc00""#, 7, "a lone surrogate in a string"),
            (#""\u12g4""#, 5, "a \\u escape without four hex digits"),
            (#"  5"#, 2, "expected a string, found '5'"),
        ]
        for (text, offset, reason) in cases {
            let result = try Self.answer(text) { reader in try reader.stringValue() }
            #expect(result == .failure(JSONReader.Failure(offset: offset, reason: reason)), "\(text)")
        }
        // Bytes that are not UTF-8: the bytes are handed over, the text refused.
        let latin1: [UInt8] = [0x22, 0x61, 0xE9, 0x62, 0x22]
        latin1.withUnsafeBytes { bytes in
            var reader = JSONReader(bytes: bytes)
            #expect(throws: JSONReader.Failure(offset: 0, reason: "a string that is not UTF-8")) { try reader.stringValue() }
            var raw = JSONReader(bytes: bytes)
            #expect((try? raw.string()) == [0x61, 0xE9, 0x62])
        }
    }

    @Test func numbers() throws {
        let wholes: [(String, Result<Int, JSONReader.Failure>)] = [
            ("42", .success(42)), (" -17 ", .success(-17)), ("0", .success(0)),
            ("9223372036854775807", .success(Int.max)), ("-9223372036854775808", .success(Int.min)),
            ("9223372036854775808", .failure(.init(offset: 0, reason: "expected a whole number"))),
            ("1.5", .failure(.init(offset: 0, reason: "expected a whole number"))),
            ("1e3", .failure(.init(offset: 0, reason: "expected a whole number"))),
            ("1-2", .failure(.init(offset: 0, reason: "expected a whole number"))),
            ("-", .failure(.init(offset: 1, reason: "a number without digits"))),
            ("-x", .failure(.init(offset: 1, reason: "a number without digits"))),
            ("x", .failure(.init(offset: 0, reason: "expected a number, found 'x'"))),
            ("", .failure(.init(offset: 0, reason: "expected a number, found the end of the file (truncated?)"))),
        ]
        for (text, expected) in wholes {
            #expect(try Self.answer(text) { reader in try reader.integer() } == expected, "\(text)")
        }
        // Any number is skipped with its syntax checked.
        for text in ["-2.5e+3", "0.000001", "1E-7", "123456789012345678901234567890"] {
            #expect(try Self.answer("[\(text)]") { reader in try reader.skipValue(); try reader.expectEnd(); return true } == .success(true), "\(text)")
        }
    }

    @Test func nestingIsWalkedAndSkippedToItsLimit() throws {
        let text = #"{"a": {"b": [1, {"c": null}, [], {}], "d": "e"}, "f": [true, false], "g\n": {"h": "i"}}"#
        let keys = try Self.answer(text) { reader -> [String] in
            var keys: [String] = []
            try reader.members { reader, key in
                keys.append(String(decoding: key, as: UTF8.self))
                if key == Array("g\n".utf8) {
                    try reader.members { reader, inner in
                        keys.append(String(decoding: inner, as: UTF8.self))
                        keys.append(try reader.stringValue())
                    }
                } else {
                    try reader.skipValue()
                }
            }
            try reader.expectEnd()
            return keys
        }
        #expect(keys == .success(["a", "f", "g\n", "h", "i"]))
        let deep = String(repeating: "[", count: JSONReader.maxDepth - 1) + String(repeating: "]", count: JSONReader.maxDepth - 1)
        #expect(try Self.answer(deep) { reader in try reader.skipValue(); return true } == .success(true))
        let deeper = String(repeating: "[", count: JSONReader.maxDepth + 1)
        #expect(try Self.answer(deeper) { reader in try reader.skipValue(); return true }
                == .failure(.init(offset: JSONReader.maxDepth, reason: "values nested deeper than \(JSONReader.maxDepth)")))
    }

    @Test func syntaxErrorsNameTheirByte() throws {
        let cases: [(String, Int, String)] = [
            (#"{"a" 1}"#, 5, "expected ':', found '1'"),
            (#"{"a": 1 "b": 2}"#, 8, "expected ',' or '}', found '\"'"),
            (#"{"a": 1,}"#, 8, "expected a key, found '}'"),
            (#"[1 2]"#, 3, "expected ',' or ']', found '2'"),
            (#"{"a": [1, 2"#, 11, "an array is not closed (truncated?)"),
            (#"{"a": 1"#, 7, "an object is not closed (truncated?)"),
            (#"{"a": "#, 6, "expected a value, found the end of the file (truncated?)"),
            (#"{"a": tru}"#, 9, "expected true"),
            (#"{"a": nul"#, 9, "expected null"),
            ("{\"a\": \u{C}}", 6, "expected a number, found byte 0x0C"),
            (#"{} x"#, 3, "unexpected 'x' after the document"),
        ]
        for (text, offset, reason) in cases {
            let result = try Self.answer(text) { reader in try reader.skipValue(); try reader.expectEnd(); return true }
            #expect(result == .failure(JSONReader.Failure(offset: offset, reason: reason)), "\(text)")
            if case .failure(let failure) = result { #expect(failure.description == "at byte \(offset): \(reason)") }
        }
    }

    @Test func aLargeFileIsReadInPiecesWithTheSameAnswer() throws {
        // 20,000 members across many pieces: escapes and multi-byte characters cut at every
        // boundary the piece sizes make.
        var text = "{"
        for i in 0..<20_000 {
            text += (i == 0 ? "" : ",") + "\n \"k\(i)\\u00e9\": {\"name\": \"n\\\"\(i)😀\", \"n\": \(i), \"x\": [1.5e3, null, {\"y\": \"\\ud83d\\ude00\"}]}"
        }
        text += "}"
        let results = try Self.everyWay(text, pieceSizes: [5, 4093, 1 << 16]) { reader -> Int in
            var sum = 0
            try reader.members { reader, key in
                #expect(String(decoding: key, as: UTF8.self).hasSuffix("é"))
                try reader.members { reader, field in
                    switch String(decoding: field, as: UTF8.self) {
                    case "name": sum += try reader.stringValue().hasSuffix("😀") ? 1 : 0
                    case "n": sum += try reader.integer()
                    default: try reader.skipValue()
                    }
                }
            }
            try reader.expectEnd()
            return sum
        }
        let expected = 20_000 + (0..<20_000).reduce(0, +)
        #expect(results.allSatisfy { (try? $0.get()) == expected }, "\(results)")
        // Cut short anywhere: the same failure from memory and from pieces.
        let cut = String(decoding: Array(text.utf8.prefix(text.utf8.count / 2 + 3)), as: UTF8.self)
        let failures = try Self.everyWay(cut, pieceSizes: [5, 4093]) { reader in try reader.skipValue() }
        #expect(Set(failures.map { "\($0)" }).count == 1 && failures.allSatisfy { if case .failure = $0 { true } else { false } }, "\(failures)")
    }

    @Test func linesAreCountedAcrossPieces() throws {
        let file = try TemporaryFile("[1,\n2,\n\n3]")
        for size in [1, 2, 1 << 20] {
            #expect(try Self.elementLines(file.path, pieceSize: size) == [1, 2, 4], "pieces of \(size)")
        }
        // Many lines, counted eight bytes at a time between the pieces' edges.
        var text = "["
        var expected: [Int] = []
        var line = 1
        for i in 0..<3000 {
            let feeds = i % 7
            text += (i == 0 ? "" : ",") + String(repeating: "\n", count: feeds) + " \"a\\n\(i)\""
            line += feeds
            expected.append(line)
        }
        let many = try TemporaryFile(text + "]")
        for size in [3, 8, 4096] {
            #expect(try Self.elementLines(many.path, pieceSize: size) == expected, "pieces of \(size)")
        }
    }

    /// The line of each element of the array in the file at `path`, read in pieces of `pieceSize`.
    static func elementLines(_ path: String, pieceSize: Int) throws -> [Int] {
        var reader = try #require(JSONReader(path: path, pieceSize: pieceSize, countsLines: true))
        var lines: [Int] = []
        try reader.elements { reader in
            _ = try reader.peek()
            lines.append(reader.line())
            try reader.skipValue()
        }
        return lines
    }
}

/// A file holding `text`, deleted when the value goes.
final class TemporaryFile {
    let path: String

    init(_ text: String) throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("json-\(UUID().uuidString)").path
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// Numbers as JSON writes them, and true and false.
struct JSONNumberTokenTests {
    @Test func numberTokensFollowJSONsGrammar() throws {
        for good in ["0", "-0", "12", "-1.5", "1e2", "1E+2", "2.5e-3", "10.01"] {
            #expect(try JSONReaderTests.answer(good) { reader in try reader.numberToken() } == .success(Array(good.utf8)), "\(good)")
        }
        for bad in ["01", "-01", "1.", "1.e2", "1e", "1e+", "1-2", "1.2.3", "--1"] {
            #expect(try JSONReaderTests.answer(bad) { reader in try reader.numberToken() } == .failure(.init(offset: 0, reason: "not a JSON number")), "\(bad)")
        }
        #expect(try JSONReaderTests.answer("+1") { reader in try reader.numberToken() } == .failure(.init(offset: 0, reason: "expected a number, found '+'")))
    }

    @Test func booleans() throws {
        #expect(try JSONReaderTests.answer(" [true, false]") { reader -> [Bool] in
            var out: [Bool] = []
            try reader.elements { reader in out.append(try reader.boolean()) }
            return out
        } == .success([true, false]))
        #expect(try JSONReaderTests.answer("null") { reader in try reader.boolean() } == .failure(.init(offset: 0, reason: "expected true or false, found 'n'")))
        #expect(try JSONReaderTests.answer("fals") { reader in try reader.boolean() } == .failure(.init(offset: 4, reason: "expected false")))
    }
}
