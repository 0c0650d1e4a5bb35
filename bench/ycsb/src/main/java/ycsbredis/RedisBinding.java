package ycsbredis;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.Vector;

import redis.clients.jedis.Jedis;
import redis.clients.jedis.exceptions.JedisException;
import site.ycsb.ByteIterator;
import site.ycsb.DB;
import site.ycsb.DBException;
import site.ycsb.Status;
import site.ycsb.StringByteIterator;

/**
 * A YCSB client for a Redis-protocol server, one connection per YCSB thread.
 *
 * A record is a hash named by its key, its fields the hash's fields (HSET/HMSET, HGETALL, HMGET,
 * DEL).  Scans need the keys in order, which a hash table does not keep, so every insert also
 * adds the key to one sorted set per table, scored by the number in the key (YCSB's keys are
 * "user" followed by digits); a scan reads the keys from there (ZRANGEBYSCORE) and then each
 * record.  Workload A does not scan; the index keeps workloads that do correct.
 *
 * Properties: redis.host (127.0.0.1), redis.port (6379), redis.timeout in ms (10000).
 * Any failure of the connection or an error reply is Status.ERROR, which YCSB counts.
 */
public final class RedisBinding extends DB {
  private Jedis jedis;

  @Override
  public void init() throws DBException {
    Properties p = getProperties();
    String host = p.getProperty("redis.host", "127.0.0.1");
    int port = Integer.parseInt(p.getProperty("redis.port", "6379"));
    int timeout = Integer.parseInt(p.getProperty("redis.timeout", "10000"));
    try {
      jedis = new Jedis(host, port, timeout);
      jedis.connect();
    } catch (JedisException e) {
      throw new DBException("cannot reach " + host + ":" + port + ": " + e.getMessage(), e);
    }
  }

  @Override
  public void cleanup() throws DBException {
    try {
      jedis.close();
    } catch (JedisException e) {
      throw new DBException(e);
    }
  }

  private static String indexOf(String table) {
    return "ycsb:index:" + table;
  }

  /** The key's number, for its place in the index: YCSB keys end in digits. */
  static double score(String key) {
    int i = key.length();
    while (i > 0 && Character.isDigit(key.charAt(i - 1))) {
      i--;
    }
    return i == key.length() ? 0 : Double.parseDouble(key.substring(i));
  }

  @Override
  public Status read(String table, String key, Set<String> fields, Map<String, ByteIterator> result) {
    try {
      if (fields == null) {
        Map<String, String> all = jedis.hgetAll(key);
        if (all.isEmpty()) {
          return Status.NOT_FOUND;
        }
        StringByteIterator.putAllAsByteIterators(result, all);
        return Status.OK;
      }
      String[] names = fields.toArray(new String[0]);
      List<String> values = jedis.hmget(key, names);
      boolean found = false;
      for (int i = 0; i < names.length; i++) {
        if (values.get(i) != null) {
          result.put(names[i], new StringByteIterator(values.get(i)));
          found = true;
        }
      }
      return found ? Status.OK : Status.NOT_FOUND;
    } catch (JedisException e) {
      return Status.ERROR;
    }
  }

  @Override
  public Status scan(String table, String startkey, int recordcount, Set<String> fields,
                     Vector<HashMap<String, ByteIterator>> result) {
    try {
      List<String> keys = new ArrayList<>(jedis.zrangeByScore(indexOf(table), score(startkey),
          Double.POSITIVE_INFINITY, 0, recordcount));
      for (String key : keys) {
        HashMap<String, ByteIterator> record = new HashMap<>();
        if (read(table, key, fields, record) == Status.ERROR) {
          return Status.ERROR;
        }
        result.add(record);
      }
      return Status.OK;
    } catch (JedisException e) {
      return Status.ERROR;
    }
  }

  @Override
  public Status update(String table, String key, Map<String, ByteIterator> values) {
    try {
      jedis.hset(key, StringByteIterator.getStringMap(values));
      return Status.OK;
    } catch (JedisException e) {
      return Status.ERROR;
    }
  }

  @Override
  public Status insert(String table, String key, Map<String, ByteIterator> values) {
    Status stored = update(table, key, values);
    if (stored != Status.OK) {
      return stored;
    }
    try {
      jedis.zadd(indexOf(table), score(key), key);
      return Status.OK;
    } catch (JedisException e) {
      return Status.ERROR;
    }
  }

  @Override
  public Status delete(String table, String key) {
    try {
      long removed = jedis.del(key);
      jedis.zrem(indexOf(table), key);
      return removed == 1 ? Status.OK : Status.NOT_FOUND;
    } catch (JedisException e) {
      return Status.ERROR;
    }
  }
}
