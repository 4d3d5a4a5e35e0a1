/// SLIP-0039, Shamir's secret-sharing for mnemonic codes (`../shared/specs/slip-0039.md`):
/// the family's key split into printed shares of which any K of N restore it (issue 14).
///
/// Built only from standard pieces on the primitives VaultCore already uses: GF(256)
/// interpolation (``GF256``), HMAC-SHA256 for the digest share, PBKDF2-HMAC-SHA256 as the
/// Feistel round function, and the RS1024 checksum. Checked against the 45 published vectors and
/// the reference implementation (trezor's shamir-mnemonic).
public enum SLIP39 {
    /// The iteration exponent new sets use: 10,000 × 2¹ PBKDF2 iterations in all.
    public static let defaultIterationExponent = 1
    /// A 256-bit secret's share is 33 words: 4 of metadata, 26 of value, 3 of checksum.
    static let metadataWords = 4
    static let checksumWords = 3
    static let radixBits = 10
    /// The shortest share: a 128-bit secret.
    static let minimumWords = metadataWords + checksumWords + (128 + radixBits - 1) / radixBits
    /// Longer than any share of a 512-bit secret; bounds what a typed file can make us parse.
    static let maximumWords = metadataWords + checksumWords + (512 + radixBits - 1) / radixBits

    /// One group of a split: how many shares it has and how many of them restore its part.
    public struct Group: Hashable, Sendable {
        public let threshold: Int
        public let count: Int
        public init(threshold: Int, count: Int) {
            self.threshold = threshold
            self.count = count
        }

        /// A group written "KofN" (any K of N shares restore it; "2of3", "2 of 3"): N from 1 to
        /// 16, K from 1 to N, as SLIP-0039 allows.
        public init(parsing text: some StringProtocol) throws {
            let numbers = text.lowercased().split(separator: "of").compactMap { Int($0.trimmingBlanks()) }
            guard numbers.count == 2, (1...16).contains(numbers[1]), (1...numbers[1]).contains(numbers[0]) else {
                throw VaultError.badGroup(String(text))
            }
            self.init(threshold: numbers[0], count: numbers[1])
        }
    }

    // MARK: Splitting

    /// Splits `secret` into shares, one array per group: any `groupThreshold` groups, each with
    /// its own threshold of shares, restore it. New sets are extendable backups (the current
    /// spec: the identifier is not part of the encryption's salt).
    public static func split(
        secret: SecretBytes, groupThreshold: Int, groups: [Group], passphrase: SecretBytes? = nil,
        iterationExponent: Int = defaultIterationExponent, extendable: Bool = true, random: RandomSource
    ) throws -> [[SLIP39Share]] {
        try checkSecretLength(secret.count)
        try checkPassphrase(passphrase)
        guard (1...16).contains(groups.count) else {
            throw ShareProblem.invalidConfiguration("a split has 1 to 16 groups, not \(groups.count)")
        }
        guard (1...groups.count).contains(groupThreshold) else {
            throw ShareProblem.invalidConfiguration("the group threshold must be 1 to \(groups.count) (the number of groups), not \(groupThreshold)")
        }
        for group in groups {
            guard (1...16).contains(group.count), (1...group.count).contains(group.threshold) else {
                throw ShareProblem.invalidConfiguration("a group has 1 to 16 shares and needs 1 to all of them, not \(group.threshold) of \(group.count)")
            }
            guard !(group.threshold == 1 && group.count > 1) else {
                // SLIP-0039 "Generating the shares", step 1: such shares would be copies.
                throw ShareProblem.invalidConfiguration("a group that needs 1 share must have only 1 (\(group.threshold) of \(group.count)): print copies of that one instead")
            }
        }
        guard (0...15).contains(iterationExponent) else {
            throw ShareProblem.invalidConfiguration("the iteration exponent is 0 to 15, not \(iterationExponent)")
        }
        let identifier = random.bytes(2).reduce(0) { $0 << 8 | Int($1) } & 0x7fff
        let encrypted = try feistel(secret, passphrase: passphrase, exponent: iterationExponent, identifier: identifier,
                                    extendable: extendable, rounds: [0, 1, 2, 3])
        let groupShares = try splitSecret(threshold: groupThreshold, count: groups.count, secret: encrypted, random: random)
        return try groups.enumerated().map { groupIndex, group in
            try splitSecret(threshold: group.threshold, count: group.count, secret: groupShares[groupIndex], random: random)
                .enumerated().map { memberIndex, value in
                    SLIP39Share(identifier: identifier, extendable: extendable, iterationExponent: iterationExponent,
                                groupIndex: groupIndex, groupThreshold: groupThreshold, groupCount: groups.count,
                                memberIndex: memberIndex, memberThreshold: group.threshold, value: value)
                }
        }
    }

    /// SplitSecret(T, N, S): N values of which any T interpolate to S at 255 and to its digest
    /// at 254.
    static func splitSecret(threshold: Int, count: Int, secret: SecretBytes, random: RandomSource) throws -> [SecretBytes] {
        if threshold == 1 { return Array(repeating: secret, count: count) }
        let n = secret.count
        let randomPart = try random.secret(n - 4)
        let digest = try SecretBytes(count: n) { out in
            try digestPrefix(key: randomPart, message: secret).withUnsafeBytes { prefix in
                for i in 0..<4 { out[i] = prefix[i] }
            }
            randomPart.withUnsafeBytes { r in for i in 0..<(n - 4) { out[4 + i] = r[i] } }
        }
        var values = try (0..<(threshold - 2)).map { _ in try random.secret(n) }
        let base: [(x: UInt8, y: SecretBytes)] = values.enumerated().map { (UInt8($0), $1) } + [(254, digest), (255, secret)]
        for x in (threshold - 2)..<count {
            values.append(try interpolate(at: UInt8(x), base))
        }
        return values
    }

    // MARK: Combining

    /// The secret behind `shares` (in any order, from 1 given share up to every share of the
    /// set). Enough complete groups are needed; a share beyond a group's threshold must fit the
    /// others. Everything wrong is a ``ShareProblem`` naming the share by its place in `shares`.
    ///
    /// With `countingRepeatsOnce`, a share given again (the same sheet scanned and typed) is
    /// counted once, as long as the distinct shares are enough; when they are not, the repeat is
    /// what is reported, since it is why they fall short.
    public static func combine(_ shares: [SLIP39Share], passphrase: SecretBytes? = nil, countingRepeatsOnce: Bool = false) throws -> SecretBytes {
        try checkPassphrase(passphrase)
        guard let first = shares.first else {
            throw ShareProblem.notEnoughShares(needed: 1, given: 0, set: 0)
        }
        for (position, share) in shares.enumerated() where !share.isSameSet(as: first) {
            throw ShareProblem.differentSets(share: position + 1, firstSet: first.identifier, otherSet: share.identifier)
        }
        // Each group's shares, in the order given, with their places in `shares`.
        var groups: [Int: [(position: Int, share: SLIP39Share)]] = [:]
        var groupOrder: [Int] = []
        var repeated: ShareProblem?
        for (position, share) in shares.enumerated() {
            let members = groups[share.groupIndex] ?? []
            if members.isEmpty { groupOrder.append(share.groupIndex) }
            if let earlier = members.first(where: { $0.share.memberIndex == share.memberIndex }) {
                if countingRepeatsOnce, share.value == earlier.share.value {
                    repeated = repeated ?? .duplicateShare(share: position + 1, sameAs: earlier.position + 1)
                    continue
                }
                throw share.value == earlier.share.value
                    ? ShareProblem.duplicateShare(share: position + 1, sameAs: earlier.position + 1)
                    : ShareProblem.duplicateMemberIndex(share: position + 1, sameAs: earlier.position + 1)
            }
            if let other = members.first, other.share.memberThreshold != share.memberThreshold {
                throw ShareProblem.memberThresholdsDiffer(share: position + 1, group: share.groupIndex + 1)
            }
            groups[share.groupIndex] = members + [(position, share)]
        }
        let complete = groupOrder.filter { groups[$0]!.count >= groups[$0]![0].share.memberThreshold }
        guard complete.count >= first.groupThreshold else {
            if let repeated { throw repeated }
            if first.groupCount == 1 {
                throw ShareProblem.notEnoughShares(needed: first.memberThreshold, given: shares.count, set: first.identifier)
            }
            let incomplete = groupOrder.filter { !complete.contains($0) }.map { index in
                ShareProblem.GroupCount(group: index + 1, needed: groups[index]![0].share.memberThreshold, given: groups[index]!.count)
            }
            throw ShareProblem.notEnoughGroups(needed: first.groupThreshold, complete: complete.count, set: first.identifier, incomplete: incomplete)
        }
        // Every share given is used or checked: a fire drill that passes must mean every sheet
        // in it is good. Shares of a group too small to restore its part cannot be checked.
        if let unused = groupOrder.first(where: { !complete.contains($0) }) {
            throw ShareProblem.unusedShare(share: groups[unused]![0].position + 1)
        }
        let groupSecrets: [(x: UInt8, y: SecretBytes)] = try complete.map { index in
            let members = groups[index]!
            let threshold = members[0].share.memberThreshold
            let points = members.prefix(threshold).map { (x: UInt8($0.share.memberIndex), y: $0.share.value) }
            let secret = try recoverSecret(threshold: threshold, points, set: first.identifier)
            // Shares past the threshold must lie on the same polynomial.
            for extra in members.dropFirst(threshold) {
                let expected = threshold == 1 ? secret : try interpolate(at: UInt8(extra.share.memberIndex), points)
                guard expected == extra.share.value else { throw ShareProblem.shareDoesNotFit(share: extra.position + 1) }
            }
            return (UInt8(index), secret)
        }
        let used = Array(groupSecrets.prefix(first.groupThreshold))
        let encrypted = try recoverSecret(threshold: first.groupThreshold, used, set: first.identifier)
        // So must groups past the group threshold.
        for (offset, extra) in groupSecrets.enumerated().dropFirst(first.groupThreshold) {
            let expected = first.groupThreshold == 1 ? used[0].y : try interpolate(at: extra.x, used)
            guard expected == extra.y else { throw ShareProblem.shareDoesNotFit(share: groups[complete[offset]]![0].position + 1) }
        }
        return try feistel(encrypted, passphrase: passphrase, exponent: first.iterationExponent, identifier: first.identifier,
                           extendable: first.extendable, rounds: [3, 2, 1, 0])
    }

    /// RecoverSecret(T, points): the value at 255, checked against the digest at 254.
    static func recoverSecret(threshold: Int, _ points: [(x: UInt8, y: SecretBytes)], set: Int) throws -> SecretBytes {
        if threshold == 1 { return points[0].y }
        let secret = try interpolate(at: 255, points)
        let digest = try interpolate(at: 254, points)
        let randomPart = try digest.slice(4..<digest.count)
        let expected = try digestPrefix(key: randomPart, message: secret)
        guard try digest.slice(0..<4) == expected else { throw ShareProblem.digestMismatch(set: set) }
        return secret
    }

    // MARK: Pieces

    static func interpolate(at x: UInt8, _ points: [(x: UInt8, y: SecretBytes)]) throws -> SecretBytes {
        try SecretBytes(count: points[0].y.count) { out in
            func gather(_ index: Int, _ collected: [(x: UInt8, y: UnsafeRawBufferPointer)]) {
                guard index < points.count else {
                    GF256.interpolate(at: x, collected, into: out)
                    return
                }
                points[index].y.withUnsafeBytes { gather(index + 1, collected + [(points[index].x, $0)]) }
            }
            gather(0, [])
        }
    }

    /// The first four bytes of HMAC-SHA256(key, message): the digest share's check value.
    static func digestPrefix(key: SecretBytes, message: SecretBytes) throws -> SecretBytes {
        try SecretBytes(count: 4) { out in
            var mac = [UInt8](repeating: 0, count: HMACSHA256.byteCount)
            defer { mac.zeroize() }
            try key.withUnsafeBytes { k in
                try message.withUnsafeBytes { m in
                    try mac.withUnsafeMutableBytes { try HMACSHA256.authenticate(key: k, parts: [m], into: $0) }
                }
            }
            for i in 0..<4 { out[i] = mac[i] }
        }
    }

    /// The four-round Feistel network of "Encryption of the master secret" (rounds 0…3) and its
    /// decryption (rounds 3…0). The round function is PBKDF2-HMAC-SHA256 with the password
    /// round ‖ passphrase and the salt (extendable: nothing; else "shamir" ‖ id) ‖ R.
    static func feistel(_ input: SecretBytes, passphrase: SecretBytes?, exponent: Int, identifier: Int,
                        extendable: Bool, rounds: [UInt8]) throws -> SecretBytes {
        let half = input.count / 2
        // Both halves and every salt are zeroed when done, and updated in place, so no copy of
        // the secret is left behind in freed memory.
        var left = input.withUnsafeBytes { Array($0[0..<half]) }
        var right = input.withUnsafeBytes { Array($0[half...]) }
        defer { left.zeroize(); right.zeroize() }
        let saltPrefix: [UInt8] = extendable ? [] : Array("shamir".utf8) + [UInt8(identifier >> 8), UInt8(identifier & 0xff)]
        for round in rounds {
            let password = try SecretBytes(count: 1 + (passphrase?.count ?? 0)) { buffer in
                buffer[0] = round
                passphrase?.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: buffer[1...]).copyMemory(from: $0) }
            }
            var salt = saltPrefix + right
            defer { salt.zeroize() }
            let f = try password.withUnsafeBytes { password in
                try PBKDF2.sha256(password: password, salt: salt, iterations: 2500 << exponent, outputByteCount: half)
            }
            // (L, R) = (R, L xor F(i, R))
            f.withUnsafeBytes { f in
                for i in 0..<half {
                    let previousLeft = left[i]
                    left[i] = right[i]
                    right[i] = previousLeft ^ f[i]
                }
            }
        }
        return try SecretBytes(count: input.count) { out in
            for i in 0..<half {
                out[i] = right[i]
                out[half + i] = left[i]
            }
        }
    }

    static func checkSecretLength(_ count: Int) throws {
        guard count >= 16, count % 2 == 0, count <= 64 else { throw ShareProblem.invalidSecretLength(count) }  // 128 to 512 bits
    }

    static func checkPassphrase(_ passphrase: SecretBytes?) throws {
        guard passphrase?.withUnsafeBytes({ $0.allSatisfy { (32...126).contains($0) } }) ?? true else { throw ShareProblem.passphraseNotPrintableASCII }
    }
}

extension VaultError.Code {
    /// A share group that is not written KofN within SLIP-0039's ranges: an option's value, a
    /// usage error (exit 64) as every other value of the split's options is.
    public static let badGroup = VaultError.Code(name: "badGroup", category: .usage)
}

extension VaultError {
    static func badGroup(_ text: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.badGroup, "a group is KofN, K and N from 1 to 16 and K at most N, not '\(text.prefix(100))'", file: file, line: line)
    }
}
