// IS3. Friends of a person, with the date at which they became friends.
MATCH (:Person {id: $personId})-[knows:KNOWS]-(friend:Person)
RETURN
  friend.id AS personId,
  friend.firstName AS firstName,
  friend.lastName AS lastName,
  knows.creationDate AS friendshipCreationDate
ORDER BY friendshipCreationDate DESC, personId ASC
