/// A value of a document or record of an export, whatever its format: a Firestore
/// entity's, a JSON record's. The field map (`FieldMap`) reads people from them.
public indirect enum DocumentValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case integer(Int64)
    case double(Double)
    case string(String)
    case bytes([UInt8])
    /// Microseconds since 1970 (negative before), as Firestore stores a timestamp.
    case timestamp(microseconds: Int64)
    case geopoint(latitude: Double, longitude: Double)
    /// A reference to another document: its path (`users/u1`).
    case reference(String)
    case array([DocumentValue])
    case map(DocumentFields)

    /// What it is, for messages ("a number", "a map").
    var kind: String {
        switch self {
        case .null: return "null"
        case .bool: return "true or false"
        case .integer, .double: return "a number"
        case .string: return "text"
        case .bytes: return "bytes"
        case .timestamp: return "a timestamp"
        case .geopoint: return "a geopoint"
        case .reference: return "a reference"
        case .array: return "an array"
        case .map: return "a map"
        }
    }

    /// Empty text, null, an empty array or map: a field that says nothing.
    var isEmpty: Bool {
        switch self {
        case .null: return true
        case .string(let text): return text.allSatisfy(\.isWhitespace)
        case .array(let values): return values.isEmpty
        case .map(let fields): return fields.isEmpty
        default: return false
        }
    }
}

/// A map's fields in the order they were read (messages name them in that order); a
/// document has a few dozen at most, so a lookup walks them.
public struct DocumentFields: Sendable, Equatable {
    public private(set) var names: [String] = []
    public private(set) var values: [DocumentValue] = []

    public init() {}

    public init(_ pairs: [(String, DocumentValue)]) {
        for (name, value) in pairs { self[name] = value }
    }

    public var isEmpty: Bool { names.isEmpty }

    public subscript(name: String) -> DocumentValue? {
        get { names.firstIndex(of: name).map { values[$0] } }
        set {
            if let index = names.firstIndex(of: name) {
                if let newValue { values[index] = newValue } else { names.remove(at: index); values.remove(at: index) }
            } else if let newValue {
                names.append(name)
                values.append(newValue)
            }
        }
    }

    /// Appends to the array named `name` (made when missing): a repeated property.
    mutating func append(_ value: DocumentValue, toArray name: String) {
        if let index = names.firstIndex(of: name), case .array(var elements) = values[index] {
            values[index] = .null
            elements.append(value)
            values[index] = .array(elements)
        } else {
            self[name] = .array([value])
        }
    }
}
