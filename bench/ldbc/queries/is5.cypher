// IS5. Creator of a message.
MATCH (:Message {id: $messageId})-[:HAS_CREATOR]->(person:Person)
RETURN
  person.id AS personId,
  person.firstName AS firstName,
  person.lastName AS lastName
