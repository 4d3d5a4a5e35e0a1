import VaultCore

/// The few S3 XML answers the client reads: an error's code and message, and a ListObjectsV2
/// page. S3's XML is flat and machine-written, so the elements are found by name; text is
/// unescaped as XML 1.0 section 4.6 (the five entities and character references).
struct S3ErrorBody {
    let code: String?
    let message: String?

    init(_ body: [UInt8]) {
        let text = String(decoding: body, as: UTF8.self)
        code = XMLText.first("Code", in: text[...])
        message = XMLText.first("Message", in: text[...])
    }
}

struct S3ListPage {
    let objects: [S3Client.Listed]
    let isTruncated: Bool
    let nextToken: String?

    init(_ body: [UInt8]) {
        let text = String(decoding: body, as: UTF8.self)
        // Only a server that says it encoded the keys has them decoded: one that ignored the
        // request gives them as they are, and a `%` there is the key's own.
        let encoded = XMLText.first("EncodingType", in: text[...]) == "url"
        objects = XMLText.elements("Contents", in: text[...]).compactMap { entry in
            guard let listed = XMLText.first("Key", in: entry) else { return nil }
            let key = encoded ? PercentEncoding.s3Key(listed) ?? listed : listed
            return S3Client.Listed(key: key, etag: XMLText.first("ETag", in: entry) ?? "",
                                   size: XMLText.first("Size", in: entry).flatMap { Int($0) } ?? 0)
        }
        isTruncated = XMLText.first("IsTruncated", in: text[...]) == "true"
        nextToken = XMLText.first("NextContinuationToken", in: text[...])
    }
}

enum XMLText {
    /// The raw inner text of every `<name>…</name>` in `text` (the first `limit`), in order.
    static func elements(_ name: String, in text: Substring, limit: Int = .max) -> [Substring] {
        var found: [Substring] = []
        var rest = text
        while found.count < limit, let open = rest.firstRange(of: "<\(name)>"), let close = rest[open.upperBound...].firstRange(of: "</\(name)>") {
            found.append(rest[open.upperBound..<close.lowerBound])
            rest = rest[close.upperBound...]
        }
        return found
    }

    /// The unescaped text of the first `<name>…</name>`.
    static func first(_ name: String, in text: Substring) -> String? {
        elements(name, in: text, limit: 1).first.map(unescaped)
    }

    static func unescaped(_ text: Substring) -> String {
        guard text.contains("&") else { return String(text) }
        var out = ""
        var rest = text
        while let amp = rest.firstIndex(of: "&") {
            out += rest[..<amp]
            guard let semi = rest[amp...].firstIndex(of: ";") else { break }
            let entity = rest[rest.index(after: amp)..<semi]
            switch entity {
            case "amp": out += "&"
            case "lt": out += "<"
            case "gt": out += ">"
            case "quot": out += "\""
            case "apos": out += "'"
            default:
                let number = entity.hasPrefix("#x") ? UInt32(entity.dropFirst(2), radix: 16)
                    : entity.hasPrefix("#") ? UInt32(entity.dropFirst(), radix: 10) : nil
                if let number, let scalar = Unicode.Scalar(number) {
                    out.unicodeScalars.append(scalar)
                } else {
                    out += rest[amp...semi]
                }
            }
            rest = rest[rest.index(after: semi)...]
        }
        return out + rest
    }
}
