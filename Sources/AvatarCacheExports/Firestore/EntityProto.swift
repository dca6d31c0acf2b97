import Foundation

/// Decodes the Datastore `EntityProto` messages a Firestore export stores, one per
/// document, by hand: the handful of fields below, without a protobuf runtime.
///
/// ```
/// EntityProto   key = 13 (Reference), property = 14, raw_property = 15 (Property)
/// Reference     path = 14 (Path: group 1 { type = 2, id = 3, name = 4 })
/// Property      meaning = 1, name = 3, multiple = 4, value = 5 (PropertyValue)
/// PropertyValue int64 = 1, boolean = 2, string = 3, double = 4,
///               group 5 { x = 6, y = 7 } (point), group 8 (user),
///               group 12 { app = 13, group 14 { type = 15, id = 16, name = 17 } } (reference)
/// ```
/// How Firestore uses them: a timestamp is an int64 of microseconds with meaning 7
/// (GD_WHEN); bytes are a string with meaning 14 or 16 (BLOB, BYTESTRING); a map is a
/// nested EntityProto in a string with meaning 19 (ENTITY_PROTO); a geopoint is a point
/// with meaning 9; an array is the property repeated with `multiple` set, in order, and
/// an empty array one property with meaning 24 (EMPTY_LIST) and no value; null is a
/// value with nothing set.
enum EntityProto {
    struct DecodeError: Error, CustomStringConvertible {
        /// Offset in the record where it was found.
        var offset: Int
        var reason: String
        var description: String { "at byte \(offset) of the document: \(reason)" }
    }

    /// A decoded document: its path (nil for a nested map) and its fields; `problems`
    /// are fields left out (an unknown value type), each saying why.
    struct Decoded {
        var path: [(collection: String, id: String)]?
        var fields: DocumentFields
        var problems: [String]
    }

    /// Decodes `bytes`. `wanted`: when set, only top-level properties with these names
    /// (UTF-8) are decoded; the others are skipped without being read.
    static func decode(_ bytes: UnsafeRawBufferPointer, wanted: [[UInt8]]? = nil) throws -> Decoded {
        var wire = ProtoWire(bytes)
        return try entity(&wire, end: bytes.count, wanted: wanted, depth: 0)
    }

    private static let maxDepth = 64

    private static func entity(_ wire: inout ProtoWire, end: Int, wanted: [[UInt8]]?, depth: Int) throws -> Decoded {
        guard depth < maxDepth else { throw wire.error("maps nested more than \(maxDepth) deep") }
        var decoded = Decoded(path: nil, fields: DocumentFields(), problems: [])
        while wire.position < end {
            let (field, type) = try wire.tag()
            switch (field, type) {
            case (13, 2):
                let length = try wire.length()
                decoded.path = try reference(&wire, end: wire.position + length)
            case (14, 2), (15, 2):
                let length = try wire.length()
                try property(&wire, end: wire.position + length, wanted: wanted, depth: depth, into: &decoded)
            default:
                try wire.skip(field: field, type: type)
            }
        }
        return decoded
    }

    /// A key's path: `Reference { path = 14 { group 1 { type = 2, id = 3, name = 4 } } }`.
    private static func reference(_ wire: inout ProtoWire, end: Int) throws -> [(collection: String, id: String)] {
        var path: [(collection: String, id: String)] = []
        while wire.position < end {
            let (field, type) = try wire.tag()
            guard field == 14, type == 2 else { try wire.skip(field: field, type: type); continue }
            let pathEnd = wire.position + (try wire.length())
            while wire.position < pathEnd {
                let (element, elementType) = try wire.tag()
                guard element == 1, elementType == 3 else { try wire.skip(field: element, type: elementType); continue }
                path.append(try pathElement(&wire, group: 1, typeField: 2, idField: 3, nameField: 4))
            }
        }
        return path
    }

    /// One path element of a group, up to the group's end.
    private static func pathElement(_ wire: inout ProtoWire, group: Int, typeField: Int, idField: Int, nameField: Int) throws -> (collection: String, id: String) {
        var collection = "", id = ""
        while true {
            let (field, type) = try wire.tag()
            if type == 4 {
                guard field == group else { throw wire.error("a group closed by the wrong field") }
                return (collection, id)
            }
            switch (field, type) {
            case (typeField, 2): collection = try wire.string()
            case (nameField, 2): id = try wire.string()
            case (idField, 0): id = String(Int64(bitPattern: try wire.varint()))
            default: try wire.skip(field: field, type: type)
            }
        }
    }

    private static func property(_ wire: inout ProtoWire, end: Int, wanted: [[UInt8]]?, depth: Int, into decoded: inout Decoded) throws {
        var meaning: UInt64 = 0
        var name: String?
        var multiple = false
        var valueRange: Range<Int>?
        while wire.position < end {
            let (field, type) = try wire.tag()
            switch (field, type) {
            case (1, 0): meaning = try wire.varint()
            case (3, 2):
                let length = try wire.length()
                if let wanted, !wanted.contains(where: { wire.bytesEqual($0, at: wire.position, length: length) }) {
                    // Not a field anyone reads: skip the rest of the property.
                    wire.position = end
                    return
                }
                name = wire.text(at: wire.position, length: length)
                wire.position += length
            case (4, 0): multiple = try wire.varint() != 0
            case (5, 2):
                let length = try wire.length()
                valueRange = wire.position..<(wire.position + length)
                wire.position += length
            default: try wire.skip(field: field, type: type)
            }
        }
        guard let name else { throw wire.error("a property without a name") }
        let value: DocumentValue
        if let valueRange {
            var inner = wire
            inner.position = valueRange.lowerBound
            do {
                value = try propertyValue(&inner, end: valueRange.upperBound, meaning: meaning, depth: depth)
            } catch let error as UnknownValue {
                decoded.problems.append("field \"\(name)\": \(error.reason): left out")
                return
            }
        } else {
            value = meaning == 24 ? .array([]) : .null
        }
        if multiple {
            decoded.fields.append(value, toArray: name)
        } else {
            decoded.fields[name] = value
        }
    }

    private struct UnknownValue: Error { var reason: String }

    private static func propertyValue(_ wire: inout ProtoWire, end: Int, meaning: UInt64, depth: Int) throws -> DocumentValue {
        var value: DocumentValue = meaning == 24 ? .array([]) : .null
        while wire.position < end {
            let (field, type) = try wire.tag()
            switch (field, type) {
            case (1, 0):
                let number = Int64(bitPattern: try wire.varint())
                value = meaning == 7 ? .timestamp(microseconds: number) : .integer(number)
            case (2, 0):
                value = .bool(try wire.varint() != 0)
            case (3, 2):
                let length = try wire.length()
                let start = wire.position
                switch meaning {
                case 19:
                    var nested = wire
                    let map = try entity(&nested, end: start + length, wanted: nil, depth: depth + 1)
                    value = .map(map.fields)
                case 14, 16:
                    value = .bytes(wire.bytes(at: start, length: length))
                default:
                    value = .string(wire.text(at: start, length: length))
                }
                wire.position = start + length
            case (4, 1):
                value = .double(Double(bitPattern: try wire.fixed64()))
            case (5, 3):
                var latitude = 0.0, longitude = 0.0
                while true {
                    let (inner, innerType) = try wire.tag()
                    if innerType == 4 { break }
                    switch (inner, innerType) {
                    case (6, 1): latitude = Double(bitPattern: try wire.fixed64())
                    case (7, 1): longitude = Double(bitPattern: try wire.fixed64())
                    default: try wire.skip(field: inner, type: innerType)
                    }
                }
                value = .geopoint(latitude: latitude, longitude: longitude)
            case (12, 3):
                var path: [String] = []
                while true {
                    let (inner, innerType) = try wire.tag()
                    if innerType == 4 { break }
                    if inner == 14, innerType == 3 {
                        let element = try pathElement(&wire, group: 14, typeField: 15, idField: 16, nameField: 17)
                        path.append("\(element.collection)/\(element.id)")
                    } else {
                        try wire.skip(field: inner, type: innerType)
                    }
                }
                value = .reference(path.joined(separator: "/"))
            default:
                throw UnknownValue(reason: "unknown value type (field \(field), wire type \(type))")
            }
        }
        return value
    }
}

/// Protocol buffers' wire format over a buffer, bounds-checked: every read past the end
/// throws instead of trapping.
struct ProtoWire {
    private let base: UnsafeRawBufferPointer
    var position = 0

    init(_ bytes: UnsafeRawBufferPointer) { base = bytes }

    func error(_ reason: String) -> EntityProto.DecodeError {
        EntityProto.DecodeError(offset: position, reason: reason)
    }

    mutating func varint() throws -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while position < base.count {
            let byte = base[position]
            position += 1
            result |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return result }
            shift += 7
            if shift > 63 { throw error("a varint longer than 10 bytes") }
        }
        throw error("the document ends inside a number")
    }

    mutating func tag() throws -> (field: Int, type: Int) {
        let key = try varint()
        guard key >> 3 > 0, key >> 3 < 1 << 29 else { throw error("field number \(key >> 3)") }
        return (Int(key >> 3), Int(key & 7))
    }

    mutating func length() throws -> Int {
        let length = try varint()
        guard length <= UInt64(base.count - position) else {
            throw error("a length of \(length) bytes runs past the end of the document")
        }
        return Int(length)
    }

    mutating func fixed64() throws -> UInt64 {
        guard base.count - position >= 8 else { throw error("the document ends inside a 64-bit value") }
        defer { position += 8 }
        return base.loadUnaligned(fromByteOffset: position, as: UInt64.self).littleEndian
    }

    mutating func string() throws -> String {
        let length = try length()
        defer { position += length }
        return text(at: position, length: length)
    }

    func text(at start: Int, length: Int) -> String {
        String(decoding: UnsafeRawBufferPointer(rebasing: base[start..<(start + length)]), as: UTF8.self)
    }

    func bytes(at start: Int, length: Int) -> [UInt8] {
        Array(base[start..<(start + length)])
    }

    func bytesEqual(_ expected: [UInt8], at start: Int, length: Int) -> Bool {
        guard expected.count == length else { return false }
        guard length > 0 else { return true }   // an empty array has no base address to compare
        return expected.withUnsafeBytes { memcmp($0.baseAddress!, base.baseAddress! + start, length) == 0 }
    }

    /// Skips one field's value after its tag (a group to its end).
    mutating func skip(field: Int, type: Int, depth: Int = 0) throws {
        switch type {
        case 0: _ = try varint()
        case 1: guard base.count - position >= 8 else { throw error("the document ends inside a 64-bit value") }; position += 8
        case 2: position += try length()
        case 5: guard base.count - position >= 4 else { throw error("the document ends inside a 32-bit value") }; position += 4
        case 3:
            guard depth < 64 else { throw error("groups nested too deep") }
            while true {
                let (inner, innerType) = try tag()
                if innerType == 4 {
                    guard inner == field else { throw error("a group closed by the wrong field") }
                    return
                }
                try skip(field: inner, type: innerType, depth: depth + 1)
            }
        default:
            throw error("wire type \(type) of field \(field)")
        }
    }
}
