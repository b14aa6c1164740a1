/// The Lua scripts the Redis engine runs (EVALSHA; loaded again on NOSCRIPT). Each one is
/// atomic in Redis, so daemons never interleave inside a change.
///
/// A room is the hash `<prefix>room:<name>` with fields page, version, by, doc, epoch, line and
/// mark (`<first>-<last>` or `-`; a room written by an older daemon has neither: line 1, no
/// mark), and its changes are published on the channel of the same name as `RoomStateLine`s.
enum RedisScripts {
    /// What the room scripts share: versions stay decimal strings in Lua, never numbers. Lua's
    /// numbers are doubles, exact only up to 2^53: `tonumber` and `+ 1` would give version
    /// 2^53 again after 2^53 (a version reused) and round versions above it, while the
    /// protocol's versions are unsigned 64-bit. `increment` adds one to a string of digits;
    /// `maxVersion` (2^64-1) cannot be incremented.
    static let versions = """
        local maxVersion = '18446744073709551615'
        local function increment(v)
          local i = #v
          while i > 0 and string.byte(v, i) == 57 do i = i - 1 end
          if i == 0 then return '1' .. string.rep('0', #v) end
          return string.sub(v, 1, i - 1) .. string.char(string.byte(v, i) + 1) .. string.rep('0', #v - i)
        end
        local function older(a, b)
          return #a < #b or (#a == #b and a < b)
        end
        -- Whether the key holds a room (or nothing) as the scripts write it: someone else may
        -- have written another type there, or a version that is no number.
        local function roomFields(key)
          local t = redis.call('TYPE', key).ok
          if t ~= 'hash' and t ~= 'none' then return nil end
          return redis.call('HMGET', key, 'page', 'version', 'by', 'doc', 'epoch', 'line', 'mark')
        end
        local function isRoom(h)
          if not h then return false end
          if not h[1] or not h[2] then return true end
          local v = h[2]
          return string.find(h[1], '^[1-9]%d*$') ~= nil and #h[1] <= 9
            and (v == '0' or string.find(v, '^[1-9]%d*$') ~= nil) and (#v < 20 or (#v == 20 and v <= maxVersion))
            and string.find(h[3] or '-', '^[^ ]+$') ~= nil and string.find(h[4] or '-', '^[^ ]+$') ~= nil
            and string.find(h[5] or '0', '^%x+$') ~= nil and #(h[5] or '0') <= 16
            and string.find(h[6] or '1', '^[1-9]%d*$') ~= nil and #(h[6] or '1') <= 18
            and (h[7] == nil or h[7] == '-' or (string.find(h[7], '^[1-9]%d*%-[1-9]%d*$') ~= nil and #h[7] <= 37))
        end

        """

    /// One navigation, `LINE` or `MARK`. KEYS[1]: the room hash. ARGV: op (next, prev, first,
    /// last, goto, line, mark), the goto page, line or mark (`<a>-<b>` or `-`), IF version ('' for
    /// none), by, page count, wraps ('1'/'0'), channel, room name, the epoch and version the
    /// daemon last served saved, and for line and mark the page whose lines the daemon checked
    /// them against (a room on another page now answers `otherpage`, changing nothing).
    /// A page turn resets the line to 1 and clears the mark. The daemon last served saved: a room behind them (Redis lost
    /// changes) is left alone and answered with the single field `behind`; a key that does not
    /// hold a room (another type, fields that are no page or version) with `corrupt`.
    /// Returns {outcome, page, version, by, doc, epoch} (see `NavigationDecision.decode`); at
    /// version 2^64-1 a change is refused (`limit`) rather than reuse a version.
    static let navigate = versions + """
        local h = roomFields(KEYS[1])
        if not isRoom(h) then return {'corrupt'} end
        if not h[1] or not h[2] then return {'missing'} end
        local page = tonumber(h[1])
        local version = h[2]
        local by = h[3] or '-'
        local doc = h[4] or '-'
        local epoch = h[5] or '0'
        local line = h[6] or '1'
        local mark = h[7] or '-'
        local count = tonumber(ARGV[5])
        if epoch == ARGV[9] and older(version, ARGV[10]) then return {'behind'} end
        local function state(outcome)
          return {outcome, string.format('%d', page), version, by, doc, epoch, line, mark}
        end
        local function publish()
          redis.call('PUBLISH', ARGV[7], ARGV[8] .. ' ' .. page .. ' ' .. version .. ' ' .. epoch .. ' ' .. doc .. ' ' .. by
            .. ' ' .. line .. ' ' .. mark)
        end
        if ARGV[3] ~= '' and ARGV[3] ~= version then return state('conflict') end
        local op = ARGV[1]
        if op == 'line' or op == 'mark' then
          if ARGV[11] ~= string.format('%d', page) then return state('otherpage') end
          if (op == 'line' and ARGV[2] == line) or (op == 'mark' and ARGV[2] == mark) then return state('same') end
          if version == maxVersion then return state('limit') end
          if op == 'line' then line = ARGV[2] else mark = ARGV[2] end
          version = increment(version)
          by = ARGV[4]
          redis.call('HSET', KEYS[1], 'version', version, 'by', by, 'line', line, 'mark', mark)
          publish()
          return state('moved')
        end
        if page > count then page = count end
        local target
        if op == 'next' then
          if page < count then target = page + 1 elseif ARGV[6] == '1' then target = 1 else return state('end-last') end
        elseif op == 'prev' then
          if page > 1 then target = page - 1 elseif ARGV[6] == '1' then target = count else return state('end-first') end
        elseif op == 'first' then target = 1
        elseif op == 'last' then target = count
        else
          target = tonumber(ARGV[2])
          if target > count then return state('nopage') end
        end
        if target == page then return state('same') end
        if version == maxVersion then return state('limit') end
        page = target
        version = increment(version)
        by = ARGV[4]
        line = '1'
        mark = '-'
        redis.call('HSET', KEYS[1], 'page', page, 'version', version, 'by', by, 'line', line, 'mark', mark)
        publish()
        return state('moved')
        """

    /// Creates a room that is missing, or records this daemon's document for it. KEYS[1]: the
    /// room hash. ARGV: page, version, by, doc, epoch (the state to create), page count,
    /// channel, room name, mode, a fresh epoch, (mode `repair`) the epoch the state is of, and the
    /// state's line and mark (mode `doc`: this daemon's, kept unless the page moved).
    /// Modes `create` and `repair` leave an existing room as it is, except that `repair` replaces
    /// a room of that epoch at an older version (Redis lost changes: restarted from an older
    /// snapshot, or overwritten) with the state given, in the epoch given; mode `doc` sets the doc, clamps the page to the count and bumps the version (at
    /// 2^64-1 it starts the fresh epoch at version 0 instead, as ``RoomRestore`` does).
    /// Returns {outcome, page, version, by, doc, epoch, line, mark} with outcome `created`, `restarted`,
    /// `changed` or `kept`, or {'corrupt'} for a key that does not hold a room.
    static let sync = versions + """
        local h = roomFields(KEYS[1])
        if not isRoom(h) then return {'corrupt'} end
        if not h[1] or not h[2] then
          redis.call('HSET', KEYS[1], 'page', ARGV[1], 'version', ARGV[2], 'by', ARGV[3], 'doc', ARGV[4], 'epoch', ARGV[5],
            'line', ARGV[12], 'mark', ARGV[13])
          redis.call('PUBLISH', ARGV[7], ARGV[8] .. ' ' .. ARGV[1] .. ' ' .. ARGV[2] .. ' ' .. ARGV[5] .. ' ' .. ARGV[4] .. ' ' .. ARGV[3]
            .. ' ' .. ARGV[12] .. ' ' .. ARGV[13])
          return {'created', ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[12], ARGV[13]}
        end
        local page = tonumber(h[1])
        local version = h[2]
        local by = h[3] or '-'
        local doc = h[4] or '-'
        local epoch = h[5] or '0'
        local line = h[6] or '1'
        local mark = h[7] or '-'
        if ARGV[9] == 'repair' and epoch == ARGV[11] and older(version, ARGV[2]) then
          redis.call('HSET', KEYS[1], 'page', ARGV[1], 'version', ARGV[2], 'by', ARGV[3], 'doc', ARGV[4], 'epoch', ARGV[5],
            'line', ARGV[12], 'mark', ARGV[13])
          redis.call('PUBLISH', ARGV[7], ARGV[8] .. ' ' .. ARGV[1] .. ' ' .. ARGV[2] .. ' ' .. ARGV[5] .. ' ' .. ARGV[4] .. ' ' .. ARGV[3]
            .. ' ' .. ARGV[12] .. ' ' .. ARGV[13])
          return {'restarted', ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[12], ARGV[13]}
        end
        if ARGV[9] == 'doc' then
          local count = tonumber(ARGV[6])
          if page > count then
            page = count
            line = '1'
            mark = '-'
          else
            line = ARGV[12]
            mark = ARGV[13]
          end
          doc = ARGV[4]
          if version == maxVersion then
            -- No version is left in this history: the change starts a new one.
            version = '0'
            epoch = ARGV[10]
            redis.call('HSET', KEYS[1], 'page', page, 'version', version, 'doc', doc, 'epoch', epoch, 'line', line, 'mark', mark)
          else
            version = increment(version)
            redis.call('HSET', KEYS[1], 'page', page, 'version', version, 'doc', doc, 'line', line, 'mark', mark)
          end
          redis.call('PUBLISH', ARGV[7], ARGV[8] .. ' ' .. page .. ' ' .. version .. ' ' .. epoch .. ' ' .. doc .. ' ' .. by
            .. ' ' .. line .. ' ' .. mark)
          return {'changed', string.format('%d', page), version, by, doc, epoch, line, mark}
        end
        return {'kept', string.format('%d', page), version, by, doc, epoch, line, mark}
        """

    /// This daemon's members of one room. KEYS[1]: the room's presence hash. ARGV: daemon id,
    /// time to live in ms, the member lines joined by LF ('' removes the daemon's entry).
    /// Each entry is `<expiry ms>` LF lines, the expiry taken from Redis's clock.
    static let presence = """
        if ARGV[3] == '' then redis.call('HDEL', KEYS[1], ARGV[1]) return 0 end
        local t = redis.call('TIME')
        local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
        redis.call('HSET', KEYS[1], ARGV[1], string.format('%.0f', now + tonumber(ARGV[2])) .. '\\n' .. ARGV[3])
        redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]) * 3)
        return 1
        """

    /// Other daemons' members of each room. KEYS: presence hashes. ARGV[1]: this daemon's id.
    /// Returns one string per key: the live entries' lines joined by LF; expired entries
    /// (a daemon that died) are deleted.
    static let members = """
        local t = redis.call('TIME')
        local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
        local out = {}
        for i, key in ipairs(KEYS) do
          local all = redis.call('HGETALL', key)
          local lines = {}
          for j = 1, #all, 2 do
            local value = all[j + 1]
            local nl = string.find(value, '\\n', 1, true)
            local expiry = nl and tonumber(string.sub(value, 1, nl - 1))
            if not expiry or expiry < now then
              redis.call('HDEL', key, all[j])
            elseif all[j] ~= ARGV[1] then
              table.insert(lines, string.sub(value, nl + 1))
            end
          end
          out[i] = table.concat(lines, '\\n')
        end
        return out
        """
}
