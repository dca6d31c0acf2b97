import Foundation
import Testing
@testable import AvatarCacheJSON

/// An export cut into records: the shapes (array, wrapper object, object of records,
/// NDJSON), each record's index, line, bytes and key, and the same records whatever the
/// pieces the file is read in; what is broken reported on its own.
struct JSONRecordStreamTests {
    struct Cut: Equatable, CustomStringConvertible {
        var index: Int
        var line: Int
        var text: String
        var key: String?
        var description: String { "#\(index) line \(line)\(key.map { " key \($0)" } ?? ""): \(text)" }
    }

    /// The records of `text`, the same with pieces of every size (checked here).
    static func records(_ text: String, recordsKey: String = "users", members: Bool = false, maxRecordBytes: Int = 1 << 20) throws -> [Cut] {
        let file = try TemporaryFile(text)
        var answers: [[Cut]] = []
        for size in [1, 2, 5, 64, 256 << 10] {
            let stream = try JSONRecordStream(path: file.path, recordsKey: recordsKey, maxRecordBytes: maxRecordBytes,
                                              membersAreRecords: members, pieceSize: size)
            answers.append(stream.map { record in
                let text: String
                switch record.bytes {
                case .success(let bytes): text = String(decoding: bytes, as: UTF8.self)
                case .failure(let error): text = "error: \(error.description)"
                }
                return Cut(index: record.index, line: record.line, text: text, key: record.key)
            })
        }
        #expect(answers.allSatisfy { $0 == answers[0] }, "the pieces change the records: \(answers)")
        return answers[0]
    }

    @Test func anArrayOfRecords() throws {
        let text = "\u{FEFF}\n[\n {\"id\": \"a\", \"s\": \"x]}\\\"\"},\n {\"id\": 2,\n  \"n\": [1, {}]} ,, \n 7, \"str\" ]  trailing"
        #expect(try Self.records(text) == [
            Cut(index: 1, line: 3, text: #"{"id": "a", "s": "x]}\""}"#),
            Cut(index: 2, line: 4, text: "{\"id\": 2,\n  \"n\": [1, {}]}"),
            Cut(index: 3, line: 6, text: "7"),
            Cut(index: 4, line: 6, text: "\"str\" "),
        ])
    }

    @Test func recordsInsideAWrapperObject() throws {
        let text = "{\"meta\": {\"users\": 1, \"s\": \"[\"},\n \"users\": [\n{\"id\": \"u1\"},\n{\"id\": \"u2\"}\n], \"after\": [1]}"
        #expect(try Self.records(text) == [
            Cut(index: 1, line: 3, text: #"{"id": "u1"}"#),
            Cut(index: 2, line: 4, text: #"{"id": "u2"}"#),
        ])
    }

    @Test func anObjectOfRecordsGivesTheirKeys() throws {
        let text = "{\"users\": {\n \"u\\u00e9\": {\"name\": \"A\"},\n \"u2\" : {\"name\": \"B\"}}}"
        #expect(try Self.records(text, members: true) == [
            Cut(index: 1, line: 2, text: #"{"name": "A"}"#, key: "ué"),
            Cut(index: 2, line: 3, text: #"{"name": "B"}"#, key: "u2"),
        ])
        // Without `members`, that object is one record (NDJSON's first).
        #expect(try Self.records(text).map(\.index) == [1])
    }

    @Test func ndjsonLineByLine() throws {
        let text = "{\"id\": 1}\n\n{\"id\": 2, \"broken\": [}\n   \n{\"id\": 3}"
        #expect(try Self.records(text) == [
            Cut(index: 1, line: 1, text: #"{"id": 1}"#),
            Cut(index: 2, line: 3, text: #"{"id": 2, "broken": [}"#),
            Cut(index: 3, line: 5, text: #"{"id": 3}"#),
        ])
    }

    @Test func whatIsBrokenIsReportedWithItsPlace() throws {
        #expect(try Self.records("x[]") == [Cut(index: 1, line: 1, text: "error: the export does not start with [ or {: found \"x\"")])
        #expect(try Self.records("\u{1}") == [Cut(index: 1, line: 1, text: "error: the export does not start with [ or {: found byte 0x01")])
        #expect(try Self.records("[{\"id\": 1},\n{\"id\": \"tru") == [
            Cut(index: 1, line: 1, text: #"{"id": 1}"#),
            Cut(index: 2, line: 2, text: "error: the export ends inside this record (truncated?)"),
        ])
        #expect(try Self.records("[{\"id\": 1},\n") == [
            Cut(index: 1, line: 1, text: #"{"id": 1}"#),
            Cut(index: 2, line: 2, text: "error: the export ends before its closing ] (truncated?)"),
        ])
        #expect(try Self.records("{\"users\": {\"a\": {}, 5}", members: true) == [
            Cut(index: 1, line: 1, text: "{}", key: "a"),
            Cut(index: 2, line: 1, text: "error: expected a key in the object of records, found \"5\""),
        ])
        #expect(try Self.records("{\"users\": {\"a\": {}", members: true).last
                == Cut(index: 2, line: 1, text: "error: the export ends before its closing } (truncated?)"))
        #expect(try Self.records("{\"x\": [1, 2") == [Cut(index: 1, line: 1, text: "error: the export ends inside its first object (truncated?)")])
        let large = "[{\"a\": \"" + String(repeating: "x", count: 100) + "\"}, {\"b\": 1}]"
        #expect(try Self.records(large, maxRecordBytes: 50) == [
            Cut(index: 1, line: 1, text: "error: record is larger than 50 bytes"),
            Cut(index: 2, line: 1, text: #"{"b": 1}"#),
        ])
        #expect(try Self.records("{\"a\": [" + String(repeating: "1,", count: 40) + "1]}\n{\"b\": 1}", maxRecordBytes: 50)
                == [Cut(index: 1, line: 1, text: "error: the first object is larger than 50 bytes and holds no \"users\" array")])
        #expect(try Self.records("{\"a\": 1}\n" + String(repeating: "y", count: 60) + "\n{\"b\": 1}", maxRecordBytes: 50) == [
            Cut(index: 1, line: 1, text: #"{"a": 1}"#),
            Cut(index: 2, line: 2, text: "error: record is larger than 50 bytes"),
            Cut(index: 3, line: 3, text: #"{"b": 1}"#),
        ])
    }

    @Test func aMissingFileIsRefused() {
        #expect(throws: CocoaError.self) { try JSONRecordStream(path: "/nonexistent/users.json", recordsKey: "users") }
    }
}
